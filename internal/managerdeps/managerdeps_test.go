package managerdeps

import (
	"testing"
	"time"

	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// manager hands out fixed collaborators and remembers the recorder name.
type manager struct {
	client   client.Client
	reader   client.Reader
	recorder recorder.EventRecorder
	named    string
}

func (m *manager) GetClient() client.Client    { return m.client }
func (m *manager) GetAPIReader() client.Reader { return m.reader }
func (m *manager) GetEventRecorder(name string) recorder.EventRecorder {
	m.named = name
	return m.recorder
}

func TestFillFrom(t *testing.T) {
	mgr := &manager{client: fake.NewFakeClient(), reader: fake.NewFakeClient(), recorder: events.NewFakeRecorder(1)}
	var c Core
	c.FillFrom(mgr, "x-controller")
	if c.Client != mgr.client || c.LiveReader != mgr.reader || c.Recorder != mgr.recorder || mgr.named != "x-controller" {
		t.Errorf("filled %v %v %v named %q, want the manager's, named x-controller", c.Client, c.LiveReader, c.Recorder, mgr.named)
	}
	own := Core{Client: fake.NewFakeClient(), LiveReader: fake.NewFakeClient(), Recorder: events.NewFakeRecorder(1)}
	c = own
	c.FillFrom(mgr, "x-controller")
	if c != own {
		t.Error("FillFrom replaced collaborators the caller set")
	}
}

func TestDefaulted(t *testing.T) {
	cl := fake.NewFakeClient()
	got := Core{Client: cl}.Defaulted()
	if got.LiveReader != cl {
		t.Errorf("LiveReader = %v, want the client", got.LiveReader)
	}
	if _, ok := got.Clock.(clock.RealClock); !ok {
		t.Errorf("Clock = %T, want the real clock", got.Clock)
	}
	fc := clocktesting.NewFakeClock(time.Unix(0, 0))
	live := fake.NewFakeClient()
	if got := (Core{Client: cl, LiveReader: live, Clock: fc}).Defaulted(); got.LiveReader != live || got.Clock != fc {
		t.Error("Defaulted replaced collaborators the caller set")
	}
}
