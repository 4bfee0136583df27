package testenv

import (
	"strconv"
	"testing"

	"github.com/ray-operator/ray-operator/internal/controlplane"
)

// FreePorts returns n distinct TCP ports on 127.0.0.1 that were free a
// moment ago, for servers a test starts (another process may take one
// first; the window is short).
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	ports, err := controlplane.FreePorts(n)
	if err != nil {
		t.Fatal(err)
	}
	return ports
}

// FreeAddr is a free "127.0.0.1:<port>" address (see FreePorts).
func FreeAddr(t testing.TB) string {
	t.Helper()
	return "127.0.0.1:" + strconv.Itoa(FreePorts(t, 1)[0])
}
