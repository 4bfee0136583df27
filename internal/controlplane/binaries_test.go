package controlplane

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ray-operator/ray-operator/internal/testing/capability"
)

func TestToolVersionsMatchMakefile(t *testing.T) {
	for variable, want := range map[string]string{"KWOK_VERSION": KwokVersion} {
		got, err := MakefileVersion(variable)
		if err != nil {
			t.Error(err)
			continue
		}
		if got != want {
			t.Errorf("Makefile %s = %s, controlplane has %s", variable, got, want)
		}
	}
}

func TestMakefileVersionOfAMissingVariable(t *testing.T) {
	if _, err := MakefileVersion("NO_SUCH_VERSION"); err == nil || !strings.Contains(err.Error(), "NO_SUCH_VERSION") {
		t.Errorf("MakefileVersion(NO_SUCH_VERSION) error = %v, want one naming the variable", err)
	}
}

func TestRequiredVersion(t *testing.T) {
	goMod := filepath.Join(t.TempDir(), "go.mod")
	content := "module x\n\ngo 1.26\n\nrequire k8s.io/kubernetes v1.36.3\n\nrequire (\n\tk8s.io/api v0.36.3\n)\n"
	if err := os.WriteFile(goMod, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		module  string
		want    string
		wantErr bool
	}{
		"one-line require": {module: "k8s.io/kubernetes", want: "v1.36.3"},
		"block require":    {module: "k8s.io/api", wantErr: true},
		"absent":           {module: "go.etcd.io/etcd/server/v3", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := requiredVersion(goMod, tc.module)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("version = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBinDirFromEnvReportsMissingBinaries(t *testing.T) {
	t.Setenv(EnvK8sBinDir, t.TempDir())
	_, err := BinDir()
	if err == nil || !regexp.MustCompile(`make k8s-binaries`).MatchString(err.Error()) {
		t.Errorf("BinDir() error = %v, want a hint to run make k8s-binaries", err)
	}
}

func TestCacheDir(t *testing.T) {
	tests := map[string]struct {
		cache, xdg string
		want       string
	}{
		"explicit cache": {cache: "/c", xdg: "/x", want: "/c"},
		"xdg":            {xdg: "/x", want: "/x/ray-operator"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Setenv(EnvCache, tc.cache)
			t.Setenv("XDG_CACHE_HOME", tc.xdg)
			got, err := CacheDir()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("CacheDir (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrefixWriterWritesWholeLines(t *testing.T) {
	var out strings.Builder
	w := &prefixWriter{prefix: "etcd | ", w: &out}
	for _, chunk := range []string{"first li", "ne\nsecond\nthi", "rd\n"} {
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	want := "etcd | first line\netcd | second\netcd | third\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

func TestStageFilesFromKwokModule(t *testing.T) {
	t.Setenv(EnvKwokStages, "")
	files, err := stageFiles(t.Context(), "")
	if err != nil {
		capability.Missingf(t, "kwok module not available offline: %v", err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	want := []string{"node-initialize.yaml", "node-heartbeat.yaml", "pod-complete.yaml", "pod-delete.yaml", "pod-ready.yaml"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("stage files (-want +got):\n%s", diff)
	}
}
