// Package auditlog configures a kube-apiserver audit log and reads it back:
// who wrote what, when, and with what answer. The failover test uses it to
// prove that only the leader writes, and the scale benchmark to count the
// operator's writes by verb and resource.
package auditlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Policy logs every request at the Metadata level (user, user agent, verb,
// object reference, answer code; no bodies), without the RequestReceived
// stage: each request is one ResponseComplete line (or Panic).
const Policy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
`

// ReceivedPolicy is Policy with the RequestReceived stage: each request
// also has a line written before the API server acts on it, so a request
// whose answer never came (its client was killed) shows too. Lines of one
// request share their AuditID.
const ReceivedPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
`

// APIServerArgs writes Policy beside logPath and returns the kube-apiserver
// flags (without "--") that make it write JSON lines to logPath. Blocking
// mode writes each line before the request is answered, so a client that
// has its answer finds the line once the API server has flushed it.
func APIServerArgs(logPath string) (map[string]string, error) {
	return APIServerArgsWithPolicy(logPath, Policy)
}

// APIServerArgsWithPolicy is APIServerArgs with the given policy (Policy
// or ReceivedPolicy).
func APIServerArgsWithPolicy(logPath, policyText string) (map[string]string, error) {
	policy := logPath + ".policy.yaml"
	if err := os.WriteFile(policy, []byte(policyText), 0o600); err != nil {
		return nil, fmt.Errorf("writing the audit policy: %w", err)
	}
	return map[string]string{
		"audit-policy-file": policy,
		"audit-log-path":    logPath,
		"audit-log-format":  "json",
		"audit-log-mode":    "blocking",
		// The API server rotates its audit log at 100 MB by default (and
		// at 0, which its log writer takes for that default): a run of
		// 10,000 RayClusters writes about 300 MB. Rotating at 1 TB keeps
		// one file; Read reads rotated ones too.
		"audit-log-maxsize": "1000000",
	}, nil
}

// Event is the part of an audit log line this package reads.
type Event struct {
	AuditID   string `json:"auditID"`
	Stage     string `json:"stage"`
	Verb      string `json:"verb"`
	UserAgent string `json:"userAgent"`
	User      struct {
		Username string `json:"username"`
	} `json:"user"`
	// SourceIPs are the client's addresses, the connection's last.
	SourceIPs []string `json:"sourceIPs"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
		// Message is an error's (a webhook's refusal names the webhook).
		Message string `json:"message"`
	} `json:"responseStatus"`
	StageTimestamp metav1.MicroTime `json:"stageTimestamp"`
}

// IsWrite reports whether e is the completion of a write: create, update,
// patch, delete or deletecollection. A request through a proxy subresource
// (services/proxy, pods/proxy: a POST to a Ray dashboard is a "create") is
// traffic to the Pod, not a write of the API's objects, and does not count.
func (e Event) IsWrite() bool {
	if e.ObjectRef != nil && e.ObjectRef.Subresource == "proxy" {
		return false
	}
	switch e.Verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return e.Stage == "ResponseComplete"
	}
	return false
}

// IsReceived reports whether e is the RequestReceived line of a request
// (ReceivedPolicy logs them).
func (e Event) IsReceived() bool { return e.Stage == "RequestReceived" }

// Succeeded reports whether the API server answered with a 2xx code.
func (e Event) Succeeded() bool {
	return e.ResponseStatus != nil && e.ResponseStatus.Code >= 200 && e.ResponseStatus.Code < 300
}

// refusedWrite reports whether e is a write the API server answered with
// an error (4xx or 5xx).
func (e Event) refusedWrite() bool {
	return e.IsWrite() && e.ResponseStatus != nil && e.ResponseStatus.Code >= 400
}

// Resource is the resource the request was about, "" for a non-resource
// request.
func (e Event) Resource() string {
	if e.ObjectRef == nil {
		return ""
	}
	return e.ObjectRef.Resource
}

// ResourcePath is the resource with its subresource, "pods" or
// "rayclusters/status".
func (e Event) ResourcePath() string {
	if e.ObjectRef == nil || e.ObjectRef.Subresource == "" {
		return e.Resource()
	}
	return e.ObjectRef.Resource + "/" + e.ObjectRef.Subresource
}

// Namespace is the namespace of the object, "" for cluster-scoped ones.
func (e Event) Namespace() string {
	if e.ObjectRef == nil {
		return ""
	}
	return e.ObjectRef.Namespace
}

// IsEvent reports whether e is about a core/v1 or events.k8s.io Event.
func (e Event) IsEvent() bool { return e.Resource() == "events" }

// Read parses the complete lines of the audit log at path, after those of
// the files the API server rotated it into (<name>-<time><ext> beside it,
// oldest first); a last line the API server is still writing is left for
// the next read.
func Read(path string) ([]Event, error) {
	files, err := rotated(path)
	if err != nil {
		return nil, err
	}
	var out []Event
	for _, f := range append(files, path) {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		events, err := Parse(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, events...)
	}
	return out, nil
}

// rotated lists the backups of the log at path, oldest first: the API
// server's log writer names them <name>-<UTC time, sortable><ext> beside it.
func rotated(path string) ([]string, error) {
	dir, base := filepath.Split(path)
	ext := filepath.Ext(base)
	prefix := strings.TrimSuffix(base, ext) + "-"
	entries, err := os.ReadDir(filepath.Clean(dir))
	if err != nil {
		return nil, err
	}
	var out []string // ReadDir sorts by name: oldest first
	for _, e := range entries {
		if name := e.Name(); strings.HasPrefix(name, prefix) && strings.HasSuffix(name, ext) {
			out = append(out, filepath.Join(dir, name))
		}
	}
	return out, nil
}

// Parse parses audit log data; an unterminated last line is ignored.
func Parse(data []byte) ([]Event, error) {
	lines := bytes.Split(data, []byte("\n"))
	out := make([]Event, 0, len(lines))
	for i, line := range lines[:len(lines)-1] {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var e Event
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("audit log line %d: %w", i+1, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// WriteCounts counts the successful writes of the events keep selects, by
// "<verb> <resource>[/<subresource>]".
func WriteCounts(events []Event, keep func(Event) bool) Counts {
	c := Counts{}
	for _, e := range events {
		if e.IsWrite() && e.Succeeded() && keep(e) {
			c[e.Verb+" "+e.ResourcePath()]++
		}
	}
	return c
}

// RefusedWriteCounts counts the writes of the events keep selects that the
// API server answered with an error, by "<verb> <resource>[/<subresource>]
// <code>": e.g. 409 for a conflict or an object that already exists.
func RefusedWriteCounts(events []Event, keep func(Event) bool) Counts {
	c := Counts{}
	for _, e := range events {
		if e.refusedWrite() && keep(e) {
			c[fmt.Sprintf("%s %s %d", e.Verb, e.ResourcePath(), e.ResponseStatus.Code)]++
		}
	}
	return c
}

// RefusedWritesByClient counts the refused writes of the events keep
// selects as RefusedWriteCounts does, by "<client> <verb> <resource> <code>",
// the client being the user agent up to the first "/" ("kwok-v0.8.0").
func RefusedWritesByClient(events []Event, keep func(Event) bool) Counts {
	c := Counts{}
	for _, e := range events {
		if e.refusedWrite() && keep(e) {
			agent, _, _ := strings.Cut(e.UserAgent, "/")
			c[fmt.Sprintf("%s %s %s %d", agent, e.Verb, e.ResourcePath(), e.ResponseStatus.Code)]++
		}
	}
	return c
}

// Counts are request counts by a key such as "<verb> <resource>".
type Counts map[string]int

// Total is the sum of all counts.
func (c Counts) Total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

// Events is the count of writes to Events.
func (c Counts) Events() int {
	n := 0
	for k, v := range c {
		if strings.HasSuffix(k, " events") {
			n += v
		}
	}
	return n
}

// Keys are the keys of c in order.
func (c Counts) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ByUserAgent selects the requests of clients whose user agent starts with
// prefix (client-go sends "<binary>/<version> (<os>/<arch>) ...").
func ByUserAgent(prefix string) func(Event) bool {
	return func(e Event) bool { return strings.HasPrefix(e.UserAgent, prefix) }
}
