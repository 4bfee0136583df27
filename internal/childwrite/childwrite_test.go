package childwrite_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/ray-operator/ray-operator/internal/childwrite"
	"github.com/ray-operator/ray-operator/internal/eventrecord"
)

var (
	errReason = errors.New("FailedCreateHeadPod")
	gr        = schema.GroupResource{Resource: "configmaps"}
)

func owner() *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "owner"}}
}

func child() *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "child"}}
}

// drain returns the events recorded so far.
func drain(rec *events.FakeRecorder) []string {
	var got []string
	for {
		select {
		case e := <-rec.Events:
			got = append(got, e)
		default:
			return got
		}
	}
}

// deleteWithPreconditions deletes as the API server does with a UID
// precondition, which the fake client ignores.
func deleteWithPreconditions(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
	o := (&client.DeleteOptions{}).ApplyOptions(opts)
	if o.Preconditions != nil && o.Preconditions.UID != nil {
		stored := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), stored); err == nil && stored.UID != *o.Preconditions.UID {
			return apierrors.NewConflict(gr, obj.GetName(), errors.New("UID precondition failed"))
		}
	}
	return c.Delete(ctx, obj, opts...)
}

func TestWrites(t *testing.T) {
	ev := func(v childwrite.Verb) childwrite.Event {
		return childwrite.Noted(v, childwrite.Noun("thing", child()), "Done", "Failed")
	}
	cases := map[string]struct {
		existing   bool  // the child is stored before the write
		answer     error // what the API server answers instead of writing
		write      func(context.Context, childwrite.Writer) error
		wantErr    string
		wantEvents []string
		wantStored bool
	}{
		"created": {
			write: func(ctx context.Context, w childwrite.Writer) error {
				return w.Create(ctx, owner(), child(), ev(childwrite.Create))
			},
			wantEvents: []string{"Normal Done Created thing ns/child"}, wantStored: true,
		},
		"create refused": {
			answer: apierrors.NewForbidden(gr, "child", errors.New("quota")),
			write: func(ctx context.Context, w childwrite.Writer) error {
				return w.Create(ctx, owner(), child(), ev(childwrite.Create))
			},
			wantErr:    `creating ConfigMap ns/child: configmaps "child" is forbidden: quota`,
			wantEvents: []string{`Warning Failed Failed to create thing ns/child: configmaps "child" is forbidden: quota`},
		},
		"create refused, reason joined and separator": {
			answer: errors.New("boom"),
			write: func(ctx context.Context, w childwrite.Writer) error {
				e := ev(childwrite.Create)
				e.ErrorAfter = ", "
				return w.Create(ctx, owner(), child(), e, childwrite.ErrorAs(errReason))
			},
			wantErr:    "FailedCreateHeadPod\nboom",
			wantEvents: []string{"Warning Failed Failed to create thing ns/child, boom"},
		},
		"already exists is a failure by default": {
			existing: true,
			write: func(ctx context.Context, w childwrite.Writer) error {
				return w.Create(ctx, owner(), child(), ev(childwrite.Create))
			},
			wantErr:    `creating ConfigMap ns/child: configmaps "child" already exists`,
			wantEvents: []string{`Warning Failed Failed to create thing ns/child: configmaps "child" already exists`},
			wantStored: true,
		},
		"already exists ignored": {
			existing: true,
			write: func(ctx context.Context, w childwrite.Writer) error {
				return w.Create(ctx, owner(), child(), ev(childwrite.Create), childwrite.IgnoreAlreadyExists())
			},
			wantStored: true,
		},
		"already exists, not ours": {
			existing: true,
			write: func(ctx context.Context, w childwrite.Writer) error {
				return w.Create(ctx, owner(), child(), ev(childwrite.Create),
					childwrite.AlreadyExistsIf(func(context.Context) bool { return false }))
			},
			wantErr:    `creating ConfigMap ns/child: configmaps "child" already exists`,
			wantEvents: []string{`Warning Failed Failed to create thing ns/child: configmaps "child" already exists`},
			wantStored: true,
		},
		"already exists as created": {
			existing: true,
			write: func(ctx context.Context, w childwrite.Writer) error {
				return w.Create(ctx, owner(), child(), ev(childwrite.Create), childwrite.AlreadyExistsAsCreated())
			},
			wantEvents: []string{"Normal Done Created thing ns/child"}, wantStored: true,
		},
		"updated": {
			existing: true,
			write: func(ctx context.Context, w childwrite.Writer) error {
				c := &corev1.ConfigMap{}
				if err := w.Client.(client.Client).Get(ctx, client.ObjectKeyFromObject(child()), c); err != nil {
					return err
				}
				return w.Update(ctx, owner(), c, ev(childwrite.Update))
			},
			wantEvents: []string{"Normal Done Updated thing ns/child"}, wantStored: true,
		},
		"patched": {
			existing: true,
			write: func(ctx context.Context, w childwrite.Writer) error {
				c := child()
				return w.Patch(ctx, owner(), c, client.MergeFrom(c.DeepCopy()), ev(childwrite.Patch))
			},
			wantEvents: []string{"Normal Done Updated thing ns/child"}, wantStored: true,
		},
		"deleted": {
			existing: true,
			write: func(ctx context.Context, w childwrite.Writer) error {
				return w.Delete(ctx, owner(), child(), ev(childwrite.Delete))
			},
			wantEvents: []string{"Normal Done Deleted thing ns/child"},
		},
		"delete of one gone records nothing": {
			write: func(ctx context.Context, w childwrite.Writer) error {
				return w.Delete(ctx, owner(), child(), ev(childwrite.Delete))
			},
		},
		"delete of one gone as deleted": {
			write: func(ctx context.Context, w childwrite.Writer) error {
				return w.Delete(ctx, owner(), child(), ev(childwrite.Delete), childwrite.NotFoundAsDeleted())
			},
			wantEvents: []string{"Normal Done Deleted thing ns/child"},
		},
		"delete precondition passed on": {
			existing: true,
			write: func(ctx context.Context, w childwrite.Writer) error {
				uid := types.UID("another")
				return w.Delete(ctx, owner(), child(), ev(childwrite.Delete), childwrite.DeleteOptions(client.Preconditions{UID: &uid}))
			},
			wantErr:    `deleting ConfigMap ns/child: Operation cannot be fulfilled on configmaps "child": UID precondition failed`,
			wantEvents: []string{`Warning Failed Failed to delete thing ns/child: Operation cannot be fulfilled on configmaps "child": UID precondition failed`},
			wantStored: true,
		},
		"done by the caller": {
			write: func(ctx context.Context, w childwrite.Writer) error {
				done := false
				err := w.Create(ctx, owner(), child(), ev(childwrite.Create), childwrite.DoneBy(func() { done = true }))
				if !done {
					return errors.New("done was not called")
				}
				return err
			},
			wantStored: true,
		},
		"reasons by verb": {
			existing: true,
			write: func(ctx context.Context, w childwrite.Writer) error {
				reasons := childwrite.Reasons{childwrite.Create: {"Made", "NotMade"}, childwrite.Delete: {"Gone", "NotGone"}}
				return w.Delete(ctx, owner(), child(), reasons.Event(childwrite.Delete, "the thing"))
			},
			wantEvents: []string{"Normal Gone Deleted the thing"},
		},
		"raw error": {
			answer: errors.New("boom"),
			write: func(ctx context.Context, w childwrite.Writer) error {
				return w.Create(ctx, owner(), child(), ev(childwrite.Create), childwrite.RawError())
			},
			wantErr:    "boom",
			wantEvents: []string{"Warning Failed Failed to create thing ns/child: boom"},
		},
		"no reasons, no events": {
			answer: errors.New("boom"),
			write: func(ctx context.Context, w childwrite.Writer) error {
				return w.Create(ctx, owner(), child(), childwrite.Event{})
			},
			wantErr: "creating ConfigMap ns/child: boom",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{Delete: deleteWithPreconditions})
			if tc.existing {
				b = b.WithObjects(child())
			}
			if tc.answer != nil {
				b = b.WithInterceptorFuncs(interceptor.Funcs{Delete: deleteWithPreconditions,
					Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
						return tc.answer
					}})
			}
			c := b.Build()
			rec := events.NewFakeRecorder(10)
			err := tc.write(t.Context(), childwrite.Writer{Client: c, Events: eventrecord.New(rec)})
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != tc.wantErr {
				t.Errorf("error %q, want %q", gotErr, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantEvents, drain(rec)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			err = c.Get(t.Context(), client.ObjectKeyFromObject(child()), &corev1.ConfigMap{})
			if stored := err == nil; stored != tc.wantStored {
				t.Errorf("stored %v, want %v (%v)", stored, tc.wantStored, err)
			}
		})
	}
}

// relatedRecorder records each event's reason and its related object's name.
type relatedRecorder []string

func (r *relatedRecorder) Eventf(_, related runtime.Object, _, reason, _, _ string, _ ...any) {
	name := "none"
	if o, ok := related.(client.Object); ok {
		name = o.GetName()
	}
	*r = append(*r, reason+" "+name)
}

// TestRelated: the related object is named where it exists, so a failed
// create names none.
func TestRelated(t *testing.T) {
	rec := &relatedRecorder{}
	w := childwrite.Writer{Client: fake.NewClientBuilder().Build(), Events: eventrecord.New(rec)}
	ev := childwrite.Noted(childwrite.Create, "thing", "Done", "Failed")
	if err := w.Create(t.Context(), owner(), child(), ev, childwrite.Related()); err != nil {
		t.Fatal(err)
	}
	if err := w.Create(t.Context(), owner(), child(), ev, childwrite.Related()); err == nil {
		t.Fatal("second create succeeded")
	}
	if err := w.Delete(t.Context(), owner(), child(), ev, childwrite.Related()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(relatedRecorder{"Done child", "Failed none", "Done child"}, *rec); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
