package prologue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/prologue"
)

// Each way out of Run answers with its own requeue time, so that a case
// states which one it took by the result.
const (
	passRan      = time.Second
	finalizerRan = 2 * time.Second
	readRetried  = 3 * time.Second
	invalidRan   = 4 * time.Second
)

func TestRun(t *testing.T) {
	refuse := func(*rayv1.RayJob) error { return errors.New("invalid") }
	other := "someone/else"
	now := metav1.Now()
	key := types.NamespacedName{Namespace: "ns", Name: "job"}
	job := func(mutate func(*rayv1.RayJob)) *rayv1.RayJob {
		j := &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job"}}
		if mutate != nil {
			mutate(j)
		}
		return j
	}
	cases := map[string]struct {
		stored     *rayv1.RayJob // nil: not stored
		readErr    error
		kind       func(*prologue.Kind[*rayv1.RayJob])
		want       ctrl.Result
		wantErr    bool
		wantForgot bool
	}{
		"runs the pass":            {stored: job(nil), want: ctrl.Result{RequeueAfter: passRan}},
		"gone: forgotten, no pass": {wantForgot: true},
		"read failed: the error":   {stored: job(nil), readErr: errors.New("etcd down"), wantErr: true},
		"read failed, retried as the kind says": {stored: job(nil), readErr: errors.New("etcd down"),
			kind: func(k *prologue.Kind[*rayv1.RayJob]) {
				k.ReadFailed = func(context.Context, error) (ctrl.Result, error) { return ctrl.Result{RequeueAfter: readRetried}, nil }
			},
			want: ctrl.Result{RequeueAfter: readRetried}},
		"behind its own write: skipped": {stored: job(nil),
			kind: func(k *prologue.Kind[*rayv1.RayJob]) { k.Behind = func(*rayv1.RayJob) bool { return true } }},
		"managed by another controller: skipped": {stored: job(func(j *rayv1.RayJob) { j.Spec.ManagedBy = &other })},
		"managed by another, but the kind has no managedBy": {stored: job(func(j *rayv1.RayJob) { j.Spec.ManagedBy = &other }),
			kind: func(k *prologue.Kind[*rayv1.RayJob]) { k.ManagedBy = nil },
			want: ctrl.Result{RequeueAfter: passRan}},
		"being deleted: finalized": {stored: job(func(j *rayv1.RayJob) {
			j.DeletionTimestamp, j.Finalizers = &now, []string{"x"}
		}), want: ctrl.Result{RequeueAfter: finalizerRan}},
		"invalid: reported, no pass": {stored: job(nil),
			kind: func(k *prologue.Kind[*rayv1.RayJob]) { k.Validate = refuse },
			want: ctrl.Result{RequeueAfter: invalidRan}},
		"invalid and being deleted: finalized": {stored: job(func(j *rayv1.RayJob) {
			j.DeletionTimestamp, j.Finalizers = &now, []string{"x"}
		}), kind: func(k *prologue.Kind[*rayv1.RayJob]) { k.Validate = refuse },
			want: ctrl.Result{RequeueAfter: finalizerRan}},
		"being deleted, nothing to finalize: no pass": {stored: job(func(j *rayv1.RayJob) {
			j.DeletionTimestamp, j.Finalizers = &now, []string{"x"}
		}), kind: func(k *prologue.Kind[*rayv1.RayJob]) { k.Finalize = nil }},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			if err := rayv1.AddToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			b := fake.NewClientBuilder().WithScheme(scheme)
			if tc.stored != nil {
				b = b.WithObjects(tc.stored)
			}
			if tc.readErr != nil {
				b = b.WithInterceptorFuncs(interceptor.Funcs{Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
					return tc.readErr
				}})
			}
			forgot := map[types.NamespacedName]bool{}
			k := prologue.Kind[*rayv1.RayJob]{
				Name: rayv1.KindRayJob, Read: prologue.FromCache(b.Build()),
				Forget:    func(key types.NamespacedName) { forgot[key] = true },
				ManagedBy: func(j *rayv1.RayJob) *string { return j.Spec.ManagedBy },
				Finalize: func(context.Context, *rayv1.RayJob) (ctrl.Result, error) {
					return ctrl.Result{RequeueAfter: finalizerRan}, nil
				},
				Validate: func(*rayv1.RayJob) error { return nil },
				Invalid: func(context.Context, *rayv1.RayJob, error) (ctrl.Result, error) {
					return ctrl.Result{RequeueAfter: invalidRan}, nil
				},
			}
			if tc.kind != nil {
				tc.kind(&k)
			}
			got, err := prologue.Run(t.Context(), key, &rayv1.RayJob{}, k, func(_ context.Context, j, read *rayv1.RayJob) (ctrl.Result, error) {
				if j.Name != "job" || j == read {
					t.Errorf("pass got %q (the read object: %v), want a copy of the stored RayJob", j.Name, j == read)
				}
				return ctrl.Result{RequeueAfter: passRan}, nil
			})
			if (err != nil) != tc.wantErr {
				t.Errorf("error %v, want an error: %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("result %+v, want %+v", got, tc.want)
			}
			if forgot[key] != tc.wantForgot {
				t.Errorf("forgotten %v, want %v", forgot[key], tc.wantForgot)
			}
		})
	}
}
