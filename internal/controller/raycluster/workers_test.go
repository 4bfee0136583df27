package raycluster

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

func TestWorkerGroupScaling(t *testing.T) {
	cases := map[string]struct {
		initial     int32                                  // replicas the first pass creates
		autoscaling bool                                   // enableInTreeAutoscaling
		randomOK    bool                                   // ENABLE_RANDOM_POD_DELETE
		change      func(*rayv1.WorkerGroupSpec, []string) // edits the group, given the Pod names
		wantPods    int
		wantDeleted func([]string) []string // which of the initial Pods are gone
	}{
		"scale up": {
			initial:  1,
			change:   func(g *rayv1.WorkerGroupSpec, _ []string) { g.Replicas = ptr.To[int32](3) },
			wantPods: 3,
		},
		"scale down without autoscaler": {
			initial:  3,
			change:   func(g *rayv1.WorkerGroupSpec, _ []string) { g.Replicas = ptr.To[int32](1) },
			wantPods: 1,
		},
		"replicas clamped to max": {
			initial: 1,
			change: func(g *rayv1.WorkerGroupSpec, _ []string) {
				g.Replicas = ptr.To[int32](50)
				g.MaxReplicas = ptr.To[int32](4)
			},
			wantPods: 4,
		},
		"autoscaler on: no random deletion": {
			initial:     3,
			autoscaling: true,
			change:      func(g *rayv1.WorkerGroupSpec, _ []string) { g.Replicas = ptr.To[int32](1) },
			wantPods:    3,
		},
		"autoscaler on with ENABLE_RANDOM_POD_DELETE": {
			initial:     3,
			autoscaling: true,
			randomOK:    true,
			change:      func(g *rayv1.WorkerGroupSpec, _ []string) { g.Replicas = ptr.To[int32](1) },
			wantPods:    1,
		},
		"autoscaler on: workersToDelete": {
			initial:     3,
			autoscaling: true,
			change: func(g *rayv1.WorkerGroupSpec, names []string) {
				g.Replicas = ptr.To[int32](2)
				g.ScaleStrategy.WorkersToDelete = []string{names[1]}
			},
			wantPods:    2,
			wantDeleted: func(names []string) []string { return []string{names[1]} },
		},
		"workersToDelete with unchanged replicas replaces the Pod": {
			initial: 2,
			change: func(g *rayv1.WorkerGroupSpec, names []string) {
				g.ScaleStrategy.WorkersToDelete = []string{names[0], "not-a-pod-of-this-group"}
			},
			wantPods:    2,
			wantDeleted: func(names []string) []string { return []string{names[0]} },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rc := makeCluster("rc").worker("small", tc.initial).with(func(rc *rayv1.RayCluster) {
				rc.Spec.EnableInTreeAutoscaling = ptr.To(tc.autoscaling)
			}).obj()
			h := newHarness(t, Options{RandomPodDelete: tc.randomOK}, rc)
			h.mustReconcile("rc", 1)
			before := h.podNames(groupPodLabels("small"))

			rc = h.cluster("rc")
			tc.change(&rc.Spec.WorkerGroupSpecs[0], before)
			h.update(rc)
			h.mustReconcile("rc", 2)

			after := h.podNames(groupPodLabels("small"))
			if len(after) != tc.wantPods {
				t.Errorf("worker Pods = %d (%v), want %d", len(after), after, tc.wantPods)
			}
			if tc.wantDeleted != nil {
				for _, gone := range tc.wantDeleted(before) {
					for _, n := range after {
						if n == gone {
							t.Errorf("Pod %s listed in workersToDelete still exists", gone)
						}
					}
				}
				if got := h.cluster("rc").Spec.WorkerGroupSpecs[0].ScaleStrategy.WorkersToDelete; len(got) != 0 {
					t.Errorf("workersToDelete = %v, want it cleared", got)
				}
			}
		})
	}
}

func TestMultiHostGroupScalesInWholeReplicas(t *testing.T) {
	rc := makeCluster("rc").worker("tpu", 2).with(func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].NumOfHosts = 4 }).obj()
	h := newHarness(t, Options{}, rc)
	h.mustReconcile("rc", 1)

	pods := h.pods(groupPodLabels("tpu"))
	if len(pods) != 8 {
		t.Fatalf("Pods = %d, want 2 replicas x 4 hosts", len(pods))
	}
	hostsByReplica := map[string][]string{}
	indexByReplica := map[string]string{}
	for _, p := range pods {
		name := p.Labels[rayv1.LabelWorkerReplicaName]
		hostsByReplica[name] = append(hostsByReplica[name], p.Labels[rayv1.LabelReplicaHostIndex])
		indexByReplica[name] = p.Labels[rayv1.LabelWorkerReplicaIndex]
	}
	if len(hostsByReplica) != 2 {
		t.Fatalf("replicas = %v, want 2", hostsByReplica)
	}
	var indices []string
	for name, hosts := range hostsByReplica {
		if diff := cmp.Diff([]string{"0", "1", "2", "3"}, sortedCopy(hosts)); diff != "" {
			t.Errorf("replica %s host indices (-want +got):\n%s", name, diff)
		}
		indices = append(indices, indexByReplica[name])
	}
	if diff := cmp.Diff([]string{"0", "1"}, sortedCopy(indices)); diff != "" {
		t.Errorf("replica indices (-want +got):\n%s", diff)
	}
	h.mustReconcile("rc", 1) // the pass that created the Pods left the status to this one
	if got := h.cluster("rc").Status.DesiredWorkerReplicas; got != 8 {
		t.Errorf("desiredWorkerReplicas = %d, want 8", got)
	}

	// A host listed in workersToDelete takes its whole replica with it.
	victim := pods[0]
	rc = h.cluster("rc")
	rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](1)
	rc.Spec.WorkerGroupSpecs[0].ScaleStrategy.WorkersToDelete = []string{victim.Name}
	h.update(rc)
	h.mustReconcile("rc", 2)
	left := h.pods(groupPodLabels("tpu"))
	if len(left) != 4 {
		t.Fatalf("Pods after deleting a replica = %d, want 4", len(left))
	}
	for _, p := range left {
		if p.Labels[rayv1.LabelWorkerReplicaName] == victim.Labels[rayv1.LabelWorkerReplicaName] {
			t.Errorf("Pod %s of the deleted replica survived", p.Name)
		}
	}

	// A replica missing a host is deleted whole, then recreated.
	if err := h.c.Delete(t.Context(), &left[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := h.reconcile("rc"); err == nil {
		t.Fatal("want an error after deleting an incomplete replica")
	}
	if got := len(h.pods(groupPodLabels("tpu"))); got != 0 {
		t.Fatalf("Pods after cleaning the incomplete replica = %d, want 0", got)
	}
	h.mustReconcile("rc", 1)
	if got := len(h.pods(groupPodLabels("tpu"))); got != 4 {
		t.Errorf("Pods after recreation = %d, want 4", got)
	}
}

func TestUnhealthyWorkerDeletion(t *testing.T) {
	cases := map[string]struct {
		restart    corev1.RestartPolicy
		phase      corev1.PodPhase
		terminated bool
		wantDelete bool
	}{
		"failed":                              {phase: corev1.PodFailed, wantDelete: true},
		"succeeded":                           {phase: corev1.PodSucceeded, wantDelete: true},
		"running, ray exited, restart Never":  {phase: corev1.PodRunning, terminated: true, restart: corev1.RestartPolicyNever, wantDelete: true},
		"running, ray exited, restart Always": {phase: corev1.PodRunning, terminated: true, restart: corev1.RestartPolicyAlways},
		"pending":                             {phase: corev1.PodPending},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{RestartPolicy: tc.restart, Containers: []corev1.Container{{Name: "ray"}}}}
			pod.Status.Phase = tc.phase
			if tc.terminated {
				pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "ray", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}}
			}
			if got, why := shouldDeletePod(pod, rayv1.WorkerNode); got != tc.wantDelete {
				t.Errorf("shouldDeletePod() = %v (%s), want %v", got, why, tc.wantDelete)
			}
		})
	}
}

func TestSuspendedWorkerGroup(t *testing.T) {
	h := newHarness(t, Options{}, makeCluster("rc").worker("small", 2).obj())
	h.mustReconcile("rc", 1)
	rc := h.cluster("rc")
	rc.Spec.WorkerGroupSpecs[0].Suspend = ptr.To(true)
	h.update(rc)
	h.mustReconcile("rc", 1)
	if got := len(h.pods(groupPodLabels("small"))); got != 0 {
		t.Errorf("Pods of the suspended group = %d, want 0", got)
	}
	if got := len(h.pods(headPodLabels)); got != 1 {
		t.Errorf("head Pods = %d, want 1", got)
	}
}

func sortedCopy(s []string) []string { return slices.Sorted(slices.Values(s)) }
