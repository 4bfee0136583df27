package raycluster

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/managerdeps"
	"github.com/ray-operator/ray-operator/internal/passsteps"
)

// TestFinishPassErrorOrder checks which error a pass returns when several
// stages fail: the reconcile error, else the status calculation's, else the
// status write's.
func TestFinishPassErrorOrder(t *testing.T) {
	errReconcile, errList, errWrite := errors.New("reconcile"), errors.New("list"), errors.New("write")
	cases := map[string]struct {
		reconcileErr        error
		failList, failWrite bool
		want                error
	}{
		"all fail":              {reconcileErr: errReconcile, failList: true, failWrite: true, want: errReconcile},
		"calculation and write": {failList: true, failWrite: true, want: errList},
		"write only":            {failWrite: true, want: errWrite},
		"none":                  {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			funcs := interceptor.Funcs{
				List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
					if _, pods := list.(*corev1.PodList); pods && tc.failList {
						return errList
					}
					return c.List(ctx, list, opts...)
				},
				SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
					if tc.failWrite {
						return errWrite
					}
					return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
				},
			}
			c := fakeClientBuilder(testScheme(t)).WithObjects(makeCluster("rc").obj()).
				WithStatusSubresource(&rayv1.RayCluster{}).WithInterceptorFuncs(funcs).Build()
			r := New(Deps{Core: managerdeps.Core{Client: c}}, Options{})
			rc := &rayv1.RayCluster{}
			if err := c.Get(t.Context(), client.ObjectKey{Namespace: testNamespace, Name: "rc"}, rc); err != nil {
				t.Fatal(err)
			}
			_, err := r.finishPass(t.Context(), newScope(rc, DefaultMaxPodWritesPerPass), passsteps.Result{}, tc.reconcileErr)
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Errorf("finishPass() error = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestFinishPassStepRequeue: a step's requeue sooner than the pass's own is
// kept (a certificate renewal, the mTLS wait); a later one is not.
func TestFinishPassStepRequeue(t *testing.T) {
	c := fakeClientBuilder(testScheme(t)).WithObjects(makeCluster("rc").obj()).
		WithStatusSubresource(&rayv1.RayCluster{}).Build()
	r := New(Deps{Core: managerdeps.Core{Client: c}}, Options{})
	// The first pass writes the status (and asks for a short requeue); the
	// next ones change nothing and ask for the default interval.
	for _, tc := range []struct{ step, want time.Duration }{
		{0, shortRequeue},
		{0, r.opts.RequeueAfter},
		{42 * time.Second, 42 * time.Second},
		{time.Hour, r.opts.RequeueAfter},
	} {
		step, want := tc.step, tc.want
		rc := &rayv1.RayCluster{}
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: testNamespace, Name: "rc"}, rc); err != nil {
			t.Fatal(err)
		}
		res, err := r.finishPass(t.Context(), newScope(rc, DefaultMaxPodWritesPerPass), passsteps.Requeue(step), nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.RequeueAfter != want {
			t.Errorf("step requeue %v: got %v, want %v", step, res.RequeueAfter, want)
		}
	}
}
