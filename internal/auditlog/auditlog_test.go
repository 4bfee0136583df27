package auditlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const sample = `{"stage":"ResponseComplete","verb":"create","userAgent":"ray-operator/v1 (linux/amd64)","objectRef":{"resource":"pods","namespace":"ns","name":"p"},"responseStatus":{"code":201}}
{"stage":"ResponseComplete","verb":"patch","userAgent":"ray-operator/v1","objectRef":{"resource":"rayclusters","subresource":"status","namespace":"ns"},"responseStatus":{"code":200}}
{"stage":"ResponseComplete","verb":"create","userAgent":"ray-operator/v1","objectRef":{"resource":"events","namespace":"ns"},"responseStatus":{"code":201}}
{"stage":"ResponseComplete","verb":"create","userAgent":"ray-operator/v1","objectRef":{"resource":"pods","namespace":"ns"},"responseStatus":{"code":409}}
{"stage":"ResponseComplete","verb":"get","userAgent":"ray-operator/v1","objectRef":{"resource":"pods","namespace":"ns"},"responseStatus":{"code":200}}
{"stage":"ResponseComplete","verb":"create","userAgent":"kube-scheduler/v1.36","objectRef":{"resource":"pods","subresource":"binding"},"responseStatus":{"code":201}}
{"stage":"Panic","verb":"update","userAgent":"ray-operator/v1","objectRef":{"resource":"pods"}}
{"stage":"ResponseComplete","verb":"delete","userAgent":"ray-operator/v1","objectRef":{"resource":"pods","namespace":"ns"},"responseStatus":{"code":200}}
{"stage":"ResponseComplete","verb":"create","userAgent":"ray-operator/v1","objectRef":{"resource":"services","subresource":"proxy","namespace":"ns"},"responseStatus":{"code":200}}
{"auditID":"a1","stage":"RequestReceived","verb":"create","userAgent":"ray-operator/v1","objectRef":{"resource":"pods","namespace":"ns"}}
{"stage":"ResponseComp`

// TestWriteCounts: only completed, successful writes of the selected
// client count (a call through a proxy subresource is none, nor the line of
// a request received); a line still being written is left for the next
// read.
func TestWriteCounts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(sample), 0o600); err != nil {
		t.Fatal(err)
	}
	events, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 10 {
		t.Fatalf("%d events, want 10 (the unterminated line left out)", len(events))
	}
	if last := events[9]; !last.IsReceived() || last.AuditID != "a1" || events[0].IsReceived() {
		t.Errorf("the RequestReceived line reads as %+v", last)
	}
	got := WriteCounts(events, ByUserAgent("ray-operator"))
	want := Counts{"create pods": 1, "patch rayclusters/status": 1, "create events": 1, "delete pods": 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if got.Total() != 4 || got.Events() != 1 {
		t.Errorf("total %d, events %d; want 4, 1", got.Total(), got.Events())
	}
	if diff := cmp.Diff([]string{"create events", "create pods", "delete pods", "patch rayclusters/status"}, got.Keys()); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	refused := RefusedWriteCounts(events, ByUserAgent("ray-operator"))
	if diff := cmp.Diff(Counts{"create pods 409": 1}, refused); diff != "" {
		t.Errorf("refused writes (-want +got):\n%s", diff)
	}
	if events[0].Namespace() != "ns" || events[5].ResourcePath() != "pods/binding" {
		t.Errorf("namespace %q, resource path %q", events[0].Namespace(), events[5].ResourcePath())
	}
}

// TestRefusedWritesByClient: refused writes of the selected clients count
// by client name (the user agent up to "/"), verb, resource and code;
// successful ones, reads and the others' do not.
func TestRefusedWritesByClient(t *testing.T) {
	events, err := Parse([]byte(`{"stage":"ResponseComplete","verb":"patch","userAgent":"kwok-v0.8.0/v0.8.0 (linux/amd64)","objectRef":{"resource":"pods","subresource":"status"},"responseStatus":{"code":422}}
{"stage":"ResponseComplete","verb":"patch","userAgent":"kwok-v0.8.0/v0.8.0 (linux/amd64)","objectRef":{"resource":"pods","subresource":"status"},"responseStatus":{"code":422}}
{"stage":"ResponseComplete","verb":"patch","userAgent":"kwok-v0.8.0/v0.8.0 (linux/amd64)","objectRef":{"resource":"pods","subresource":"status"},"responseStatus":{"code":200}}
{"stage":"ResponseComplete","verb":"get","userAgent":"kube-scheduler/v1.36.3","objectRef":{"resource":"pods"},"responseStatus":{"code":404}}
{"stage":"ResponseComplete","verb":"create","userAgent":"kube-scheduler/v1.36.3","objectRef":{"resource":"pods","subresource":"binding"},"responseStatus":{"code":409}}
{"stage":"ResponseComplete","verb":"create","userAgent":"ray-operator","objectRef":{"resource":"rayclusters"},"responseStatus":{"code":409}}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := Counts{"kwok-v0.8.0 patch pods/status 422": 2, "kube-scheduler create pods/binding 409": 1}
	others := func(e Event) bool { return !ByUserAgent("ray-operator")(e) }
	if diff := cmp.Diff(want, RefusedWritesByClient(events, others)); diff != "" {
		t.Errorf("refused writes by client (-want +got):\n%s", diff)
	}
}

func TestParseRejectsGarbage(t *testing.T) {
	if _, err := Parse([]byte("{}\nnot json\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("error %v, want one naming line 2", err)
	}
}

func TestAPIServerArgs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	args, err := APIServerArgs(path)
	if err != nil {
		t.Fatal(err)
	}
	policy, err := os.ReadFile(args["audit-policy-file"])
	if err != nil || string(policy) != Policy {
		t.Errorf("policy file %q (%v)", policy, err)
	}
	if args["audit-log-path"] != path || args["audit-log-format"] != "json" || args["audit-log-maxsize"] != "1000000" {
		t.Errorf("args %v", args)
	}
}

// TestReadIncludesRotatedFiles: the lines of the files the API server
// rotated the log into count, oldest first, before those of the log; other
// files beside it do not.
func TestReadIncludesRotatedFiles(t *testing.T) {
	dir := t.TempDir()
	line := func(name string) string {
		return `{"stage":"ResponseComplete","verb":"create","userAgent":"a","objectRef":{"resource":"pods","name":"` + name + `"},"responseStatus":{"code":201}}` + "\n"
	}
	for name, content := range map[string]string{
		"audit-2026-11-27T09-14-09.354.log": line("second"),
		"audit-2026-11-27T08-17-15.868.log": line("first"),
		"audit.log":                         line("third"),
		"audit.log.policy.yaml":             Policy,
		"other-2026-11-27T08-00-00.000.log": line("not ours"),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	events, err := Read(filepath.Join(dir, "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range events {
		names = append(names, e.ObjectRef.Name)
	}
	if diff := cmp.Diff([]string{"first", "second", "third"}, names); diff != "" {
		t.Errorf("events read (-want +got):\n%s", diff)
	}
}
