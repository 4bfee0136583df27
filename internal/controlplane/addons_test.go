package controlplane

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// recordingAddon notes its calls in a shared log.
type recordingAddon struct {
	name       string
	log        *callLog
	prepareErr error
}

// callLog is the calls of several addons, in order.
type callLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *callLog) add(call string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, call)
}

func (a *recordingAddon) Name() string { return a.name }

func (a *recordingAddon) Prepare(context.Context, *Host) error {
	a.log.add("prepare " + a.name)
	return a.prepareErr
}

func (a *recordingAddon) Start(context.Context, *Host) error {
	a.log.add("start " + a.name)
	return nil
}

func TestRunAddonsPreparesAllBeforeStartingAny(t *testing.T) {
	log := &callLog{}
	addons := []Addon{&recordingAddon{name: "a", log: log}, &recordingAddon{name: "b", log: log}}
	if err := runAddons(t.Context(), &Host{}, addons); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"prepare a", "prepare b"}, log.calls[:2]); diff != "" {
		t.Errorf("first calls (-want +got):\n%s", diff)
	}
	started := log.calls[2:]
	if len(started) != 2 || !strings.HasPrefix(started[0], "start ") || !strings.HasPrefix(started[1], "start ") {
		t.Errorf("calls after preparing = %v, want both addons started", started)
	}
}

func TestRunAddonsStopsAtAFailedPrepare(t *testing.T) {
	log := &callLog{}
	addons := []Addon{&recordingAddon{name: "a", log: log, prepareErr: errors.New("no kube-system")}, &recordingAddon{name: "b", log: log}}
	err := runAddons(t.Context(), &Host{}, addons)
	if err == nil || !strings.Contains(err.Error(), "preparing a: no kube-system") {
		t.Fatalf("runAddons() = %v, want the failed prepare named", err)
	}
	if diff := cmp.Diff([]string{"prepare a"}, log.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// Addons of a control plane with a node network belong to the network: the
// two lists would start in no defined order.
func TestOptionsAddonsRefusedWithANetwork(t *testing.T) {
	opts := Options{StateDir: t.TempDir(), BinDir: t.TempDir(), Network: &NodeNetwork{}, Addons: []Addon{&recordingAddon{name: "a", log: &callLog{}}}}
	err := opts.complete()
	if err == nil || !strings.Contains(err.Error(), "list them in Network.Addons") {
		t.Errorf("complete() = %v, want the addons refused", err)
	}
}
