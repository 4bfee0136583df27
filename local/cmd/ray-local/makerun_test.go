package main

import (
	"flag"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ray-operator/ray-operator/internal/controlplane"
	"github.com/ray-operator/ray-operator/internal/testing/capability"
)

// addonModules maps ray-local's add-on flags to the hack/ module the
// Makefile builds the add-on from.
var addonModules = map[string]string{
	"cert-manager": "hack/cert-manager-controller",
	"kueue":        "hack/kueue",
	"gateway":      "hack/traefik",
}

// TestMakeRunBuildsTheAddOnsAsked: `make run` builds an add-on (minutes on
// a new machine) only when ARGS turns its flag on, in any form Go's flag
// package takes for true. make -n with an empty tools cache prints every
// build it would run.
func TestMakeRunBuildsTheAddOnsAsked(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		capability.Missing(t, "make is not installed")
	}
	fs := flag.NewFlagSet("ray-local", flag.ContinueOnError)
	bindLocalFlags(fs)
	for name := range addonModules {
		if f := fs.Lookup(name); f == nil || f.DefValue != "false" {
			t.Fatalf("ray-local has no boolean flag --%s off by default", name)
		}
	}
	for args, want := range map[string][]string{
		"":                                    nil,
		"--simulated --node-cpu=8":            nil,
		"--kueue":                             {"kueue"},
		"-gateway":                            {"gateway"},
		"--cert-manager=true --webhooks":      {"cert-manager"},
		"--kueue=1 -gateway=T --cert-manager": {"cert-manager", "gateway", "kueue"},
		"--kueue=false --gateway=0":           nil,
	} {
		t.Run("ARGS="+args, func(t *testing.T) {
			if diff := cmp.Diff(want, addonsBuilt(t, args)); diff != "" {
				t.Errorf("make -n run ARGS=%q builds the add-ons (-want +got):\n%s", args, diff)
			}
		})
	}
}

// addonsBuilt returns the flags, sorted, of the add-ons `make -n run
// ARGS=args` builds from an empty tools cache.
func addonsBuilt(t *testing.T, args string) []string {
	t.Helper()
	root, err := controlplane.ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("make", "-n", "-C", root, "run", "CACHE="+t.TempDir(), "ARGS="+args)
	cmd.Env = append(os.Environ(), "MAKEFLAGS=", "MAKELEVEL=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n run: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "bin/ray-local") {
		t.Fatalf("make -n run prints no ray-local command:\n%s", out)
	}
	var built []string
	for _, name := range []string{"cert-manager", "gateway", "kueue"} {
		if strings.Contains(string(out), "cd "+addonModules[name]+" && ") {
			built = append(built, name)
		}
	}
	return built
}
