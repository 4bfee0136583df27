package invalidspec

import (
	"errors"
	"fmt"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	"github.com/ray-operator/ray-operator/internal/eventrecord"
)

// TestReport: the event carries the error's reason and note prefix (the
// fallback reason for any other error), and the log line says what kind
// is invalid and why.
func TestReport(t *testing.T) {
	errBad := errors.New("bad replicas")
	cases := map[string]struct {
		err       error
		wantEvent string
		wantLog   string
	}{
		"an invalid spec": {
			err:       New("InvalidRayJobSpec", errBad),
			wantEvent: "Warning InvalidRayJobSpec ns/obj: bad replicas",
			wantLog:   `"level"=0 "msg"="Invalid RayJob" "reason"="InvalidRayJobSpec" "error"="bad replicas"`,
		},
		"a prefixed note, wrapped": {
			err:       fmt.Errorf("%w", &Error{Reason: "InvalidRayClusterMetadata", NotePrefix: "The RayCluster metadata is invalid ", Err: errBad}),
			wantEvent: "Warning InvalidRayClusterMetadata The RayCluster metadata is invalid ns/obj: bad replicas",
			wantLog:   `"level"=0 "msg"="Invalid RayJob" "reason"="InvalidRayClusterMetadata" "error"="bad replicas"`,
		},
		"another error": {
			err:       errBad,
			wantEvent: "Warning Fallback ns/obj: bad replicas",
			wantLog:   `"level"=0 "msg"="Invalid RayJob" "reason"="Fallback" "error"="bad replicas"`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var logged string
			ctx := logr.NewContext(t.Context(), funcr.New(func(_, args string) { logged = args }, funcr.Options{}))
			fake := events.NewFakeRecorder(1)
			obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "obj", Namespace: "ns"}}
			Report(ctx, eventrecord.New(fake), obj, "RayJob", tc.err, "Fallback")
			if got := <-fake.Events; got != tc.wantEvent {
				t.Errorf("event %q, want %q", got, tc.wantEvent)
			}
			if logged != tc.wantLog {
				t.Errorf("logged %s, want %s", logged, tc.wantLog)
			}
		})
	}
}

func TestNew(t *testing.T) {
	if New("R", nil) != nil {
		t.Error("New of no error is not nil")
	}
	errBad := errors.New("bad")
	err := New("R", errBad)
	if !errors.Is(err, errBad) || err.Error() != "bad" {
		t.Errorf("New(R, bad) = %v, want an error that is bad", err)
	}
}
