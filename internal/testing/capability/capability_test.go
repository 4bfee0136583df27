package capability_test

import (
	"strings"
	"testing"

	"github.com/ray-operator/ray-operator/internal/testing/capability"
)

// recorder is a testing.TB that records Skip and Fatalf instead of ending
// the test.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()          {}
func (r *recorder) Skip(args ...any) { r.skipped = args[0].(string) }
func (r *recorder) Fatalf(f string, args ...any) {
	r.failed = f
	if len(args) > 0 {
		r.failed = args[0].(string)
	}
}

func TestMissing(t *testing.T) {
	for _, tc := range []struct {
		ci         string
		skip, fail bool
	}{
		{ci: "", skip: true},
		{ci: "false", skip: true},
		{ci: "0", skip: true},
		{ci: "yes", skip: true}, // not a boolean strconv reads
		{ci: "true", fail: true},
		{ci: "1", fail: true},
		{ci: "TRUE", fail: true},
	} {
		t.Run("CI="+tc.ci, func(t *testing.T) {
			t.Setenv(capability.CIEnv, tc.ci)
			r := &recorder{TB: t}
			capability.Missingf(r, "needs %s", "root")
			if got := r.skipped == "needs root"; got != tc.skip {
				t.Errorf("skipped %q, want a skip %v", r.skipped, tc.skip)
			}
			if got := strings.HasPrefix(r.failed, "needs root"); got != tc.fail {
				t.Errorf("failed %q, want a failure %v", r.failed, tc.fail)
			}
			if capability.InCI() != tc.fail {
				t.Errorf("InCI() = %v", capability.InCI())
			}
		})
	}
}
