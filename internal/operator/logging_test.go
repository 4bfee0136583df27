package operator

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

func TestNewLoggerRejectsUnknownEncoder(t *testing.T) {
	_, _, err := NewLogger(configv1alpha1.Configuration{LogStdoutEncoder: "xml"}, ctrlzap.Options{})
	if err == nil || !strings.Contains(err.Error(), "log-stdout-encoder") {
		t.Fatalf("NewLogger() error = %v, want a log-stdout-encoder error", err)
	}
}
