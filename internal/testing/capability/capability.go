// Package capability is for tests that need something of the machine
// (root, runc, a non-loopback IPv4 address, a module available offline):
// where that is missing they skip on a developer's machine but fail in CI,
// so that CI cannot pass by skipping what it was set up to run.
package capability

import (
	"fmt"
	"os"
	"strconv"
	"testing"
)

// CIEnv is the environment variable that says the tests run in CI: any
// value strconv.ParseBool reads as true ("true", "1"...). CI services set
// CI=true.
const CIEnv = "CI"

// InCI says whether CIEnv says the tests run in CI.
func InCI() bool {
	ci, err := strconv.ParseBool(os.Getenv(CIEnv))
	return err == nil && ci
}

// Missing ends a test that cannot run here for want of what reason
// names: it skips the test, or fails it when InCI.
func Missing(t testing.TB, reason string) {
	t.Helper()
	if InCI() {
		t.Fatalf("%s (%s=%s: a test that cannot run fails in CI instead of skipping)", reason, CIEnv, os.Getenv(CIEnv))
	} else {
		t.Skip(reason)
	}
}

// Missingf is Missing with a reason formatted as by fmt.Sprintf.
func Missingf(t testing.TB, format string, args ...any) {
	t.Helper()
	Missing(t, fmt.Sprintf(format, args...))
}
