package managerdeps

import (
	"testing"

	"k8s.io/client-go/tools/events"
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

func TestFill(t *testing.T) {
	mgr := &manager{client: fake.NewFakeClient(), reader: fake.NewFakeClient(), recorder: events.NewFakeRecorder(1)}
	var c client.Client
	var live client.Reader
	var rec events.EventRecorder
	Fill(mgr, "x-controller", &c, &live, &rec)
	if c != mgr.client || live != mgr.reader || rec != mgr.recorder || mgr.named != "x-controller" {
		t.Errorf("filled %v %v %v named %q, want the manager's, named x-controller", c, live, rec, mgr.named)
	}
	ownClient, ownReader, ownRecorder := fake.NewFakeClient(), fake.NewFakeClient(), events.NewFakeRecorder(1)
	c, live, rec = ownClient, ownReader, ownRecorder
	Fill(mgr, "x-controller", &c, &live, &rec)
	if c != ownClient || live != ownReader || rec != ownRecorder {
		t.Error("Fill replaced collaborators the caller set")
	}
}
