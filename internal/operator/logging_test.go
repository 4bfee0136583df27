package operator

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
	ctrlzap "sigs.k8s.io/controller-runtime/pkg/log/zap"

	configv1alpha1 "github.com/ray-operator/ray-operator/api/config/v1alpha1"
)

func TestNewLoggerWritesFile(t *testing.T) {
	tests := map[string]struct {
		encoder  string
		wantJSON bool
	}{
		"json":    {encoder: "json", wantJSON: true},
		"console": {encoder: "console"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "operator.log")
			cfg := configv1alpha1.Configuration{LogFile: path, LogFileEncoder: tc.encoder, LogStdoutEncoder: "json"}
			logger, closeLog, err := NewLogger(cfg, ctrlzap.Options{DestWriter: &strings.Builder{}})
			if err != nil {
				t.Fatalf("NewLogger() error = %v", err)
			}
			logger.Info("hello", "key", "value")
			if err := closeLog(); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			line := strings.TrimSpace(string(data))
			if !strings.Contains(line, "hello") {
				t.Fatalf("log file = %q, want the message", line)
			}
			if got := json.Valid([]byte(line)); got != tc.wantJSON {
				t.Errorf("log file line %q: JSON = %v, want %v", line, got, tc.wantJSON)
			}
		})
	}
}

// TestNewLoggerWritesHeldValues checks the fields of WithValues reach the
// line, after the logger's name and before the line's own, and that the
// caller is the line's (lazylog sits between them).
func TestNewLoggerWritesHeldValues(t *testing.T) {
	var out strings.Builder
	logger, closeLog, err := NewLogger(configv1alpha1.Configuration{LogStdoutEncoder: "json"}, ctrlzap.Options{DestWriter: &out, ZapOpts: []zap.Option{zap.AddCaller()}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = closeLog() }()
	logger.WithValues("controller", "raycluster").WithName("setup").WithValues("step", "pods").Info("hello", "key", "value")
	var line map[string]any
	if err := json.Unmarshal([]byte(out.String()), &line); err != nil {
		t.Fatalf("stdout %q: %v", out.String(), err)
	}
	for k, want := range map[string]string{"logger": "setup", "controller": "raycluster", "step": "pods", "key": "value", "msg": "hello"} {
		if line[k] != want {
			t.Errorf("%s = %v, want %q (line %s)", k, line[k], want, out.String())
		}
	}
	if caller, _ := line["caller"].(string); !strings.HasPrefix(caller, "operator/logging_test.go:") {
		t.Errorf("caller = %q, want this test's line", caller)
	}
	if i, j := strings.Index(out.String(), `"controller"`), strings.Index(out.String(), `"key"`); i < 0 || j < i {
		t.Errorf("held values should come before the line's own: %s", out.String())
	}
}

func TestNewLoggerRejectsUnknownEncoder(t *testing.T) {
	_, _, err := NewLogger(configv1alpha1.Configuration{LogStdoutEncoder: "xml"}, ctrlzap.Options{})
	if err == nil || !strings.Contains(err.Error(), "log-stdout-encoder") {
		t.Fatalf("NewLogger() error = %v, want a log-stdout-encoder error", err)
	}
}
