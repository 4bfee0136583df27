// Package kuberneteswas_test runs the operator with the KubernetesWAS
// feature gate against the full local control plane (kube-apiserver serving
// scheduling.k8s.io/v1alpha2, kube-scheduler with gang scheduling,
// kube-controller-manager, kwok nodes of controlplane.NodeResources), and
// shows what the default scheduler does with the Workload and PodGroup the
// operator keeps: a RayCluster's Pods are bound all together or not at all.
package kuberneteswas_test

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/ray-operator/ray-operator/api/config/v1alpha1"
	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/batchscheduler"
	"github.com/ray-operator/ray-operator/internal/batchscheduler/kuberneteswas"
	scheduling "github.com/ray-operator/ray-operator/internal/batchscheduler/kuberneteswas/schedulingv1alpha2"
	"github.com/ray-operator/ray-operator/internal/features"
	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
	"github.com/ray-operator/ray-operator/internal/testing/wrappers"
)

// One simulated node to begin with; TestGangScheduling adds another.
func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.WithFullControlPlane(1), testenv.WithScheme(scheduling.AddToScheme)))
}

// startOperator runs the operator, as cmd/ray-operator builds it, on the
// test's namespace with the KubernetesWAS gate set to was.
func startOperator(t *testing.T, w *testenv.World, was bool) {
	t.Helper()
	cfg := configv1alpha1.Configuration{MetricsAddr: "0", ProbeAddr: "0", EnableLeaderElection: ptr.To(false), WatchNamespace: w.NS}
	configv1alpha1.SetDefaults(&cfg)
	gate := features.NewGate()
	if err := gate.SetFromMap(map[string]bool{string(features.KubernetesWAS): was}); err != nil {
		t.Fatal(err)
	}
	if err := configv1alpha1.Validate(&cfg, was); err != nil {
		t.Fatal(err)
	}
	mgr, err := operator.New(operator.Settings{
		Config: cfg, Knobs: configv1alpha1.DefaultKnobs(), Features: gate, SkipControllerNameValidation: true,
	}, w.Env.Config)
	if err != nil {
		t.Fatal(err)
	}
	var run testenv.Runner
	run.Start(mgr)
	t.Cleanup(run.Stop)
}

// cpuCluster is a gang-scheduled RayCluster whose head and each of the
// workers Pods of group "w" request cpu cores.
func cpuCluster(name string, workers int32, cpu string) *rayv1.RayCluster {
	requests := wrappers.Resources("cpu", cpu, "memory", "1Gi")
	spec := wrappers.MakeRayClusterSpec().RayVersion("2.52.0").WorkerGroup("w", workers, 0, 10).
		Requests(rayv1.HeadGroupName, requests).Requests("w", requests).Obj()
	return &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{batchscheduler.LabelGangSchedulingEnabled: "true"}},
		Spec:       *spec,
	}
}

// bound counts the Pods the scheduler has placed.
func bound(pods []corev1.Pod) int {
	n := 0
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			n++
		}
	}
	return n
}

// podGroupScheduled waits until the cluster's PodGroup has the scheduler's
// PodGroupScheduled condition with status, and returns it.
func podGroupScheduled(w *testenv.World, cluster string, status metav1.ConditionStatus) *metav1.Condition {
	w.T.Helper()
	var cond *metav1.Condition
	w.Eventually(fmt.Sprintf("PodGroup of %s PodGroupScheduled=%s", cluster, status), func() (bool, error) {
		pg := &scheduling.PodGroup{}
		if !w.Get(kuberneteswas.PodGroupName(cluster), pg) {
			return false, fmt.Errorf("no PodGroup")
		}
		cond = meta.FindStatusCondition(pg.Status.Conditions, scheduling.PodGroupScheduled)
		return cond != nil && cond.Status == status, fmt.Errorf("conditions %+v", pg.Status.Conditions)
	})
	return cond
}

// checkObjects compares the cluster's Workload and PodGroup with KubeRay's
// (kuberneteswas.Build*) as the API server stores them.
func checkObjects(w *testenv.World, cluster *rayv1.RayCluster, minCount int32) {
	w.T.Helper()
	workload, pg := &scheduling.Workload{}, &scheduling.PodGroup{}
	w.WaitGet(cluster.Name, workload)
	w.WaitGet(kuberneteswas.PodGroupName(cluster.Name), pg)
	if diff := cmp.Diff(kuberneteswas.BuildWorkload(cluster).Spec, workload.Spec); diff != "" {
		w.T.Errorf("Workload spec (-want +got):\n%s", diff)
	}
	// The API server defaults the PodGroup's disruptionMode to Pod.
	wantPG := kuberneteswas.BuildPodGroup(cluster).Spec
	wantPG.DisruptionMode = ptr.To("Pod")
	if diff := cmp.Diff(wantPG, pg.Spec); diff != "" {
		w.T.Errorf("PodGroup spec (-want +got):\n%s", diff)
	}
	for _, obj := range []metav1.Object{workload, pg} {
		if !metav1.IsControlledBy(obj, cluster) || obj.GetLabels()[rayv1.LabelCluster] != cluster.Name {
			w.T.Errorf("%s: owners %v labels %v", obj.GetName(), obj.GetOwnerReferences(), obj.GetLabels())
		}
	}
	if got := pg.Spec.SchedulingPolicy.Gang.MinCount; got != minCount {
		w.T.Errorf("minCount %d, want %d", got, minCount)
	}
	if !slices.Contains(pg.Finalizers, scheduling.PodGroupProtectionFinalizer) {
		w.T.Errorf("PodGroup finalizers %v: the API server protects it", pg.Finalizers)
	}
}

// TestGangScheduling: a node has 256 cores. A RayCluster of three Pods of
// 100 cores gets none bound (one by one, two would fit) until a second node
// comes; then all three are. A cluster that fits is bound whole at once.
// Scaling replaces the immutable Workload and PodGroup; dropping the gang
// label removes them while the Pods still name the PodGroup.
func TestGangScheduling(t *testing.T) {
	w := testenv.NewWorld(t, testenv.Shared(t))
	w.Timeout = 60 * time.Second
	startOperator(t, w, true)

	gang := cpuCluster("gang", 2, "100")
	w.Create(gang)
	w.WaitGet("gang", gang)
	checkObjects(w, gang, 3)
	pods := w.WaitPods("gang", nil, 3)
	for _, p := range pods {
		if p.Spec.SchedulerName != corev1.DefaultSchedulerName || p.Spec.SchedulingGroup == nil || ptr.Deref(p.Spec.SchedulingGroup.PodGroupName, "") != "gang-cluster" {
			t.Errorf("Pod %s: schedulerName %q schedulingGroup %+v", p.Name, p.Spec.SchedulerName, p.Spec.SchedulingGroup)
		}
	}
	cond := podGroupScheduled(w, "gang", metav1.ConditionFalse)
	t.Logf("PodGroupScheduled=False: %s: %s", cond.Reason, cond.Message)
	if n := bound(w.Pods("gang", nil)); n != 0 {
		t.Fatalf("%d of 3 Pods bound although the gang does not fit", n)
	}

	if err := w.Env.ControlPlane.AddNode(t.Context(), "kwok-was-extra"); err != nil {
		t.Fatal(err)
	}
	w.Eventually("all 3 Pods of gang bound", func() (bool, error) {
		n := bound(w.Pods("gang", nil))
		return n == 3, fmt.Errorf("%d bound", n)
	})
	podGroupScheduled(w, "gang", metav1.ConditionTrue)

	fits := cpuCluster("fits", 1, "50")
	w.Create(fits)
	w.WaitGet("fits", fits)
	checkObjects(w, fits, 2)
	w.Eventually("both Pods of fits bound", func() (bool, error) {
		n := bound(w.Pods("fits", nil))
		return n == 2, fmt.Errorf("%d bound", n)
	})

	scaleReplacesObjects(w, fits)
	labelRemovalDeletesObjects(w, fits)
}

// scaleReplacesObjects: a third worker changes minCount; the old PodGroup
// and Workload are deleted and made anew (new UIDs) with minCount 3.
func scaleReplacesObjects(w *testenv.World, cluster *rayv1.RayCluster) {
	w.T.Helper()
	oldPG := &scheduling.PodGroup{}
	w.WaitGet(kuberneteswas.PodGroupName(cluster.Name), oldPG)
	w.Update(cluster, func() { cluster.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](2) })
	w.Eventually("a new PodGroup of minCount 3", func() (bool, error) {
		pg := &scheduling.PodGroup{}
		ok := w.Get(kuberneteswas.PodGroupName(cluster.Name), pg)
		return ok && pg.UID != oldPG.UID && pg.Spec.SchedulingPolicy.Gang.MinCount == 3, fmt.Errorf("PodGroup %v %+v", ok, pg.Spec)
	})
	checkObjects(w, cluster, 3)
}

// labelRemovalDeletesObjects: without the gang label the cluster loses its
// PodGroup and Workload, though its Pods still name the PodGroup (the
// operator releases the protection finalizer).
func labelRemovalDeletesObjects(w *testenv.World, cluster *rayv1.RayCluster) {
	w.T.Helper()
	w.Update(cluster, func() { cluster.Labels[batchscheduler.LabelGangSchedulingEnabled] = "false" })
	w.Eventually("Workload and PodGroup of "+cluster.Name+" deleted", func() (bool, error) {
		errW := w.Client.Get(w.T.Context(), client.ObjectKey{Namespace: w.NS, Name: cluster.Name}, &scheduling.Workload{})
		errP := w.Client.Get(w.T.Context(), client.ObjectKey{Namespace: w.NS, Name: kuberneteswas.PodGroupName(cluster.Name)}, &scheduling.PodGroup{})
		return apierrors.IsNotFound(errW) && apierrors.IsNotFound(errP), fmt.Errorf("Workload: %v, PodGroup: %v", errW, errP)
	})
}

// TestGateOff: without the gate a gang-labeled cluster's Pods name no
// PodGroup and no Workload is made; they are scheduled one by one.
func TestGateOff(t *testing.T) {
	w := testenv.NewWorld(t, testenv.Shared(t))
	startOperator(t, w, false)
	w.Create(cpuCluster("plain", 1, "1"))
	for _, p := range w.WaitPods("plain", nil, 2) {
		if p.Spec.SchedulingGroup != nil || p.Spec.SchedulerName != corev1.DefaultSchedulerName {
			t.Errorf("Pod %s: schedulingGroup %+v schedulerName %q", p.Name, p.Spec.SchedulingGroup, p.Spec.SchedulerName)
		}
	}
	// The Pods come after the batch scheduler step of the same pass.
	var list scheduling.WorkloadList
	w.List(&list)
	if len(list.Items) != 0 {
		t.Errorf("Workloads %v without the gate", list.Items)
	}
}
