package rollingupdate

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

const (
	newHash = "NEW"
	oldHash = "OLD"
)

// podOpt shapes a test Pod.
type podOpt func(*corev1.Pod)

var (
	unready     podOpt = func(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse }
	terminating podOpt = func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: time.Unix(100, 0)} }
	unstamped   podOpt = func(p *corev1.Pod) { delete(p.Annotations, AnnotationTemplateHash) }
)

// age orders Pods: a higher n is younger.
func age(n int) podOpt {
	return func(p *corev1.Pod) { p.CreationTimestamp = metav1.NewTime(time.Unix(int64(n), 0)) }
}

func pod(name, hash string, opts ...podOpt) corev1.Pod {
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{AnnotationTemplateHash: hash}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
	for _, o := range opts {
		o(&p)
	}
	return p
}

func olds(n int, opts ...podOpt) []corev1.Pod {
	var out []corev1.Pod
	for i := range n {
		out = append(out, pod(fmt.Sprintf("old-%d", i), oldHash, append([]podOpt{age(i)}, opts...)...))
	}
	return out
}

func group(replicas, minReplicas int32, wtd ...string) *rayv1.WorkerGroupSpec {
	return &rayv1.WorkerGroupSpec{GroupName: "g", Replicas: ptr.To(replicas), MinReplicas: ptr.To(minReplicas),
		MaxReplicas: ptr.To[int32](100), ScaleStrategy: rayv1.ScaleStrategy{WorkersToDelete: wtd}}
}

func limits(surge, unavailable intstr.IntOrString) *rayv1.RayClusterRollingUpdateOptions {
	return &rayv1.RayClusterRollingUpdateOptions{MaxSurge: &surge, MaxUnavailable: &unavailable}
}

func TestStep(t *testing.T) {
	one, zero := intstr.FromInt32(1), intstr.FromInt32(0)
	cases := map[string]struct {
		in   Input
		want Plan
	}{
		"all up to date: the ordinary scaling decides": {
			in:   Input{Group: group(2, 0), Pods: []corev1.Pod{pod("a", newHash), pod("b", newHash)}},
			want: Plan{UpToDate: 2, Desired: 2},
		},
		"defaults 25%/25% of 4: one extra Pod, one unready": {
			in:   Input{Group: group(4, 0), Pods: olds(4)},
			want: Plan{InProgress: true, Create: 1, Delete: []string{"old-3"}, OutOfDate: 4, Desired: 4},
		},
		"defaults of 3: surge rounds up to 1, unavailable down to 0": {
			in:   Input{Group: group(3, 0), Pods: olds(3)},
			want: Plan{InProgress: true, Create: 1, OutOfDate: 3, Desired: 3},
		},
		"surge cap: desired+maxSurge Pods in all, terminating ones counted": {
			in: Input{Group: group(3, 0), Options: limits(one, zero),
				Pods: append(olds(3), pod("new-0", newHash, unready), pod("gone", oldHash, terminating))},
			want: Plan{InProgress: true, UpToDate: 1, OutOfDate: 3, Desired: 3},
		},
		"autoscaling: no surge past maxReplicas": {
			in: Input{Group: func() *rayv1.WorkerGroupSpec { g := group(3, 0); g.MaxReplicas = ptr.To[int32](3); return g }(),
				Options: limits(one, one), Pods: olds(3), Autoscaling: true},
			want: Plan{InProgress: true, Delete: []string{"old-2"}, OutOfDate: 3, Desired: 3},
		},
		"autoscaling: surge up to maxReplicas": {
			in: Input{Group: func() *rayv1.WorkerGroupSpec { g := group(3, 0); g.MaxReplicas = ptr.To[int32](4); return g }(),
				Options: limits(intstr.FromInt32(2), zero), Pods: olds(3), Autoscaling: true},
			want: Plan{InProgress: true, Create: 1, OutOfDate: 3, Desired: 3},
		},
		"unavailable cap: unready new Pods count as missing": {
			in: Input{Group: group(3, 0), Options: limits(zero, one),
				Pods: append(olds(2), pod("new-0", newHash, unready))},
			want: Plan{InProgress: true, UpToDate: 1, OutOfDate: 2, Desired: 3},
		},
		"unavailable cap: 2 of 4 at once without surge": {
			in:   Input{Group: group(4, 0), Options: limits(zero, intstr.FromString("50%")), Pods: olds(4)},
			want: Plan{InProgress: true, Delete: []string{"old-3", "old-2"}, OutOfDate: 4, Desired: 4},
		},
		"the replacements of deleted Pods are created once they are gone": {
			in: Input{Group: group(4, 0), Options: limits(zero, intstr.FromString("50%")),
				Pods: append(olds(2), pod("x", oldHash, terminating), pod("y", oldHash, terminating))},
			want: Plan{InProgress: true, OutOfDate: 2, Desired: 4},
		},
		"terminating Pods gone: two new ones": {
			in:   Input{Group: group(4, 0), Options: limits(zero, intstr.FromString("50%")), Pods: olds(2)},
			want: Plan{InProgress: true, Create: 2, OutOfDate: 2, Desired: 4},
		},
		"never below minReplicas: no unready Pod allowed, so surge first": {
			in:   Input{Group: group(3, 3), Options: limits(one, one), Pods: olds(3)},
			want: Plan{InProgress: true, Create: 1, OutOfDate: 3, Desired: 3},
		},
		"never below minReplicas: an old Pod goes once the surge Pod is ready": {
			in:   Input{Group: group(3, 3), Options: limits(one, one), Pods: append(olds(3), pod("new-0", newHash))},
			want: Plan{InProgress: true, Delete: []string{"old-2"}, UpToDate: 1, OutOfDate: 3, Desired: 3},
		},
		"minReplicas with no surge: blocked": {
			in:   Input{Group: group(2, 2), Options: limits(zero, one), Pods: olds(2)},
			want: Plan{InProgress: true, Blocked: true, OutOfDate: 2, Desired: 2},
		},
		"unready old Pods go first and cost no availability": {
			in:   Input{Group: group(3, 0), Options: limits(zero, one), Pods: append(olds(2), pod("sick", oldHash, age(0), unready))},
			want: Plan{InProgress: true, Delete: []string{"sick"}, OutOfDate: 3, Desired: 3},
		},
		"a Pod without a hash is out of date": {
			in:   Input{Group: group(1, 0), Options: limits(one, zero), Pods: []corev1.Pod{pod("a", newHash, unstamped)}},
			want: Plan{InProgress: true, Create: 1, OutOfDate: 1, Desired: 1},
		},
		"workersToDelete: neither counted nor replaced nor deleted twice": {
			in: Input{Group: group(2, 0, "old-2"), Options: limits(zero, one),
				Pods: olds(3)},
			want: Plan{InProgress: true, Delete: []string{"old-1"}, OutOfDate: 2, Desired: 2},
		},
		"workersToDelete of every old Pod: nothing left to update": {
			in: Input{Group: group(1, 0, "old-0"), Options: limits(one, one),
				Pods: append(olds(1), pod("new-0", newHash))},
			want: Plan{UpToDate: 1, Desired: 1},
		},
		"suspended cluster: nothing": {
			in:   Input{Group: group(2, 0), Pods: olds(2), ClusterSuspended: true},
			want: Plan{},
		},
		"suspended group: nothing": {
			in: Input{Group: func() *rayv1.WorkerGroupSpec { g := group(2, 0); g.Suspend = ptr.To(true); return g }(),
				Pods: olds(2)},
			want: Plan{},
		},
		"replicas raised during the update: new Pods up to the surge cap": {
			in: Input{Group: group(5, 0), Options: limits(one, one),
				Pods: append(olds(2), pod("new-0", newHash), pod("new-1", newHash))},
			want: Plan{InProgress: true, Create: 2, UpToDate: 2, OutOfDate: 2, Desired: 5},
		},
		"replicas lowered during the update: old Pods go, no new one": {
			in:   Input{Group: group(1, 0), Options: limits(one, one), Pods: append(olds(2), pod("new-0", newHash))},
			want: Plan{InProgress: true, Delete: []string{"old-1", "old-0"}, UpToDate: 1, OutOfDate: 2, Desired: 1},
		},
		"scaled to zero: every old Pod goes": {
			in:   Input{Group: group(0, 0), Pods: olds(2)},
			want: Plan{InProgress: true, Delete: []string{"old-1", "old-0"}, OutOfDate: 2},
		},
		"only terminating old Pods left: still in progress, new Pods within the surge": {
			in: Input{Group: group(2, 0), Options: limits(one, zero),
				Pods: []corev1.Pod{pod("new-0", newHash), pod("x", oldHash, terminating)}},
			want: Plan{InProgress: true, UpToDate: 1, Desired: 2, Create: 1},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.in.Hash = newHash
			got, err := Step(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Step (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStepBounds runs whole updates, applying each plan (created Pods are
// unready first, then ready the next step; deleted Pods terminate for one
// step) and checks the bounds at every step.
func TestStepBounds(t *testing.T) {
	for _, tc := range []struct {
		replicas, minReplicas int32
		surge, unavailable    intstr.IntOrString
	}{
		{4, 0, intstr.FromString("25%"), intstr.FromString("25%")},
		{3, 3, intstr.FromInt32(1), intstr.FromInt32(2)},
		{5, 1, intstr.FromInt32(0), intstr.FromInt32(2)},
		{5, 0, intstr.FromInt32(3), intstr.FromInt32(0)},
		{1, 1, intstr.FromInt32(1), intstr.FromInt32(0)},
	} {
		t.Run(fmt.Sprintf("%d-min%d-%s-%s", tc.replicas, tc.minReplicas, tc.surge.String(), tc.unavailable.String()), func(t *testing.T) {
			g := group(tc.replicas, tc.minReplicas)
			opts := limits(tc.surge, tc.unavailable)
			surge, unavailable, _ := Limits(opts, int(tc.replicas))
			floor := max(int(tc.replicas)-unavailable, int(tc.minReplicas))
			pods, next := olds(int(tc.replicas)), 0
			for step := 0; ; step++ {
				if step > 50 {
					t.Fatal("no end after 50 steps")
				}
				plan, err := Step(Input{Group: g, Options: opts, Hash: newHash, Pods: pods})
				if err != nil || plan.Blocked {
					t.Fatalf("step %d: err %v, blocked %v", step, err, plan.Blocked)
				}
				if !plan.InProgress {
					// The ordinary scaling creates what is missing.
					if plan.OutOfDate != 0 || plan.UpToDate > int(tc.replicas) {
						t.Fatalf("done with %d up-to-date and %d out-of-date Pods, want %d", plan.UpToDate, plan.OutOfDate, tc.replicas)
					}
					return
				}
				pods = applyPlan(pods, plan, &next)
				if len(pods) > int(tc.replicas)+surge {
					t.Fatalf("step %d: %d Pods, over %d+%d", step, len(pods), tc.replicas, surge)
				}
				if r := countReady(live(pods)); r < floor {
					t.Fatalf("step %d: %d ready Pods, under %d", step, r, floor)
				}
			}
		})
	}
}

// applyPlan moves the world one step: terminating Pods vanish, unready ones
// turn ready, then the plan's deletions and creations happen.
func applyPlan(pods []corev1.Pod, plan Plan, next *int) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range pods {
		if !p.DeletionTimestamp.IsZero() {
			continue
		}
		p.Status.Conditions[0].Status = corev1.ConditionTrue
		for _, d := range plan.Delete {
			if p.Name == d {
				terminating(&p)
			}
		}
		out = append(out, p)
	}
	for range plan.Create {
		out = append(out, pod(fmt.Sprintf("new-%d", *next), newHash, unready))
		*next++
	}
	return out
}

func live(pods []corev1.Pod) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp.IsZero() {
			out = append(out, p)
		}
	}
	return out
}

func TestGroupHash(t *testing.T) {
	base := group(2, 1)
	base.Template.Spec.Containers = []corev1.Container{{Name: "ray-worker", Image: "ray:1"}}
	h0, _ := GroupHash(base)
	scaled := base.DeepCopy()
	scaled.Replicas, scaled.MinReplicas, scaled.ScaleStrategy.WorkersToDelete = ptr.To[int32](7), ptr.To[int32](3), []string{"x"}
	scaled.Suspend, scaled.IdleTimeoutSeconds = ptr.To(true), ptr.To[int32](9)
	if h, _ := GroupHash(scaled); h != h0 {
		t.Errorf("scale fields changed the hash")
	}
	changed := base.DeepCopy()
	changed.Template.Spec.Containers[0].Image = "ray:2"
	if h, _ := GroupHash(changed); h == h0 {
		t.Errorf("an image change kept the hash")
	}
	params := base.DeepCopy()
	params.RayStartParams = map[string]string{"num-cpus": "1"}
	if h, _ := GroupHash(params); h == h0 {
		t.Errorf("a rayStartParams change kept the hash")
	}
}

func TestLimits(t *testing.T) {
	for name, tc := range map[string]struct {
		opts           *rayv1.RayClusterRollingUpdateOptions
		desired        int
		surge, unavail int
	}{
		"defaults of 10":                  {desired: 10, surge: 3, unavail: 2},
		"defaults of 1: unavailable 1":    {desired: 1, surge: 1, unavail: 0},
		"percentages of 0: unavailable 1": {opts: limits(intstr.FromString("10%"), intstr.FromString("10%")), desired: 0, unavail: 1},
		"numbers":                         {opts: limits(intstr.FromInt32(2), intstr.FromInt32(0)), desired: 5, surge: 2},
	} {
		t.Run(name, func(t *testing.T) {
			s, u, err := Limits(tc.opts, tc.desired)
			if err != nil || s != tc.surge || u != tc.unavail {
				t.Errorf("Limits = %d, %d, %v; want %d, %d", s, u, err, tc.surge, tc.unavail)
			}
		})
	}
}
