package raycluster_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

func conditionTrue(s *rayv1.RayClusterStatus, t rayv1.RayClusterConditionType) bool {
	return meta.IsStatusConditionTrue(s.Conditions, string(t))
}

func TestClusterBecomesReady(t *testing.T) {
	w := newWorld(t)
	w.Create(w.newCluster("ready", group("small", 2)))

	w.WaitPods("ready", headLabels(), 1)
	w.WaitPods("ready", groupLabels("small"), 2)
	rc := w.waitStatus("ready", "provisioning", func(s *rayv1.RayClusterStatus) bool {
		c := meta.FindStatusCondition(s.Conditions, string(rayv1.RayClusterProvisioned))
		return c != nil && c.Reason == rayv1.RayClusterPodsProvisioning
	})
	if conditionTrue(&rc.Status, rayv1.HeadPodReady) {
		t.Error("HeadPodReady true before the head runs")
	}

	w.RunPods("ready", 3)
	rc = w.waitStatus("ready", "ready", func(s *rayv1.RayClusterStatus) bool {
		return s.State == rayv1.Ready && conditionTrue(s, rayv1.RayClusterProvisioned) &&
			conditionTrue(s, rayv1.HeadPodReady) && s.ReadyWorkerReplicas == 2
	})
	s := rc.Status
	head := w.Pods("ready", headLabels())
	want := map[string]any{
		"availableWorkerReplicas": int32(2), "desiredWorkerReplicas": int32(2), "minWorkerReplicas": int32(0), "maxWorkerReplicas": int32(10),
		"desiredCPU": "1500m", "desiredMemory": "3Gi", "head.podName": head[0].Name, "head.podIP": head[0].Status.PodIP,
		"head.serviceName": "ready-head-svc", "head.serviceIP": head[0].Status.PodIP, "endpoints.dashboard": "8265",
		"endpoints.client": "10001", "observedGeneration": rc.Generation,
	}
	got := map[string]any{
		"availableWorkerReplicas": s.AvailableWorkerReplicas, "desiredWorkerReplicas": s.DesiredWorkerReplicas,
		"minWorkerReplicas": s.MinWorkerReplicas, "maxWorkerReplicas": s.MaxWorkerReplicas,
		"desiredCPU": s.DesiredCPU.String(), "desiredMemory": s.DesiredMemory.String(),
		"head.podName": s.Head.PodName, "head.podIP": s.Head.PodIP, "head.serviceName": s.Head.ServiceName,
		"head.serviceIP": s.Head.ServiceIP, "endpoints.dashboard": s.Endpoints["dashboard"],
		"endpoints.client": s.Endpoints["client"], "observedGeneration": s.ObservedGeneration,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("status %s = %v, want %v", k, got[k], v)
		}
	}
	// As KubeRay's status update stores them: zero quantities are written
	// too (`kubectl get rayclusters` shows GPUS 0, not an empty column).
	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(rayv1.GroupVersion.WithKind("RayCluster"))
	if err := w.Client.Get(context.Background(), client.ObjectKey{Namespace: w.NS, Name: "ready"}, stored); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"desiredGPU", "desiredTPU"} {
		if v, _, _ := unstructured.NestedString(stored.Object, "status", field); v != "0" {
			t.Errorf("stored status.%s = %q, want \"0\"", field, v)
		}
	}
	if s.LastUpdateTime == nil || s.StateTransitionTimes[rayv1.Ready] == nil {
		t.Errorf("lastUpdateTime %v, stateTransitionTimes %v", s.LastUpdateTime, s.StateTransitionTimes)
	}

	// Every child has the RayCluster as controller owner.
	svc := &corev1.Service{}
	if err := w.Client.Get(context.Background(), client.ObjectKey{Namespace: w.NS, Name: "ready-head-svc"}, svc); err != nil {
		t.Fatal(err)
	}
	for _, obj := range []client.Object{svc, &head[0]} {
		if ref := metav1.GetControllerOf(obj); ref == nil || ref.Name != "ready" || ref.Kind != "RayCluster" {
			t.Errorf("%s has controller %v, want the RayCluster", obj.GetName(), ref)
		}
	}
	w.WaitEvent("ready", "CreatedHeadPod")
}

func TestScaleUpAndDown(t *testing.T) {
	w := newWorld(t)
	w.Create(w.newCluster("scale", group("small", 1)))
	w.WaitPods("scale", groupLabels("small"), 1)

	w.edit("scale", func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](4) })
	pods := w.WaitPods("scale", groupLabels("small"), 4)
	w.waitStatus("scale", "4 desired workers", func(s *rayv1.RayClusterStatus) bool { return s.DesiredWorkerReplicas == 4 })

	// The autoscaler's way: lower replicas and name the victim.
	victim := pods[2].Name
	w.edit("scale", func(rc *rayv1.RayCluster) {
		rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](3)
		rc.Spec.WorkerGroupSpecs[0].ScaleStrategy.WorkersToDelete = []string{victim}
	})
	pods = w.WaitPods("scale", groupLabels("small"), 3)
	for _, p := range pods {
		if p.Name == victim {
			t.Errorf("Pod %s named in workersToDelete survived", victim)
		}
	}
	w.Eventually("workersToDelete cleared", func() (bool, error) {
		return len(w.RayCluster("scale").Spec.WorkerGroupSpecs[0].ScaleStrategy.WorkersToDelete) == 0, nil
	})

	// Without the autoscaler, lowering replicas deletes Pods itself.
	w.edit("scale", func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](1) })
	w.WaitPods("scale", groupLabels("small"), 1)
	w.waitStatus("scale", "1 desired worker", func(s *rayv1.RayClusterStatus) bool { return s.DesiredWorkerReplicas == 1 })
}

func TestAutoscalerOnlyDeletesNamedWorkers(t *testing.T) {
	w := newWorld(t)
	rc := w.newCluster("auto", group("small", 3))
	rc.Spec.EnableInTreeAutoscaling = ptr.To(true)
	w.Create(rc)
	pods := w.WaitPods("auto", groupLabels("small"), 3)

	w.edit("auto", func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](1) })
	w.waitStatus("auto", "1 desired worker", func(s *rayv1.RayClusterStatus) bool { return s.DesiredWorkerReplicas == 1 })
	w.Consistently("no random deletion with the autoscaler on", w.Timeout/10, func() (bool, error) {
		return len(w.Pods("auto", groupLabels("small"))) == 3, nil
	})
	w.edit("auto", func(rc *rayv1.RayCluster) {
		rc.Spec.WorkerGroupSpecs[0].ScaleStrategy.WorkersToDelete = []string{pods[0].Name, pods[1].Name}
	})
	left := w.WaitPods("auto", groupLabels("small"), 1)
	if left[0].Name != pods[2].Name {
		t.Errorf("remaining worker = %s, want %s", left[0].Name, pods[2].Name)
	}
}

func TestAutoscalerRBACAndIngress(t *testing.T) {
	w := newWorld(t)
	rc := w.newCluster("rbac", group("small", 1))
	rc.Spec.EnableInTreeAutoscaling = ptr.To(true)
	rc.Spec.HeadGroupSpec.EnableIngress = ptr.To(true)
	rc.Annotations = map[string]string{rayv1.AnnotationIngressClass: "nginx"}
	w.Create(rc)
	w.WaitPods("rbac", headLabels(), 1)

	key := client.ObjectKey{Namespace: w.NS, Name: "rbac"}
	sa, role, binding := &corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}
	ingress := &networkingv1.Ingress{}
	for _, o := range []struct {
		obj client.Object
		key client.ObjectKey
	}{{sa, key}, {role, key}, {binding, key}, {ingress, client.ObjectKey{Namespace: w.NS, Name: "rbac-head-ingress"}}} {
		if err := w.Client.Get(context.Background(), o.key, o.obj); err != nil {
			t.Fatalf("getting %T %s: %v", o.obj, o.key, err)
		}
		if ref := metav1.GetControllerOf(o.obj); ref == nil || ref.Name != "rbac" {
			t.Errorf("%T %s is not controlled by the RayCluster", o.obj, o.key)
		}
	}
	if len(role.Rules) != 3 || binding.RoleRef.Name != "rbac" || binding.Subjects[0].Name != "rbac" {
		t.Errorf("role rules %v, binding %v", role.Rules, binding)
	}
	if ingress.Spec.IngressClassName == nil || *ingress.Spec.IngressClassName != "nginx" {
		t.Errorf("ingress class = %v, want nginx", ingress.Spec.IngressClassName)
	}
	head := w.Pods("rbac", headLabels())[0]
	if head.Spec.ServiceAccountName != "rbac" || len(head.Spec.Containers) != 2 {
		t.Errorf("head service account %q with %d containers, want the autoscaler sidecar", head.Spec.ServiceAccountName, len(head.Spec.Containers))
	}
}

func TestUserNamedServiceAccountMustExist(t *testing.T) {
	w := newWorld(t)
	rc := w.newCluster("mysa", group("small", 1))
	rc.Spec.EnableInTreeAutoscaling = ptr.To(true)
	rc.Spec.HeadGroupSpec.Template.Spec.ServiceAccountName = "users-sa"
	w.Create(rc)
	w.WaitEvent("mysa", "AutoscalerServiceAccountNotFound")
	if n := len(w.Pods("mysa", nil)); n != 0 {
		t.Errorf("%d Pods created without the service account", n)
	}
	w.Create(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: w.NS, Name: "users-sa"}})
	w.WaitPods("mysa", headLabels(), 1)
}

func TestMultiHostGroup(t *testing.T) {
	w := newWorld(t)
	g := group("tpu", 2)
	g.NumOfHosts = 2
	w.Create(w.newCluster("multi", g))
	pods := w.WaitPods("multi", groupLabels("tpu"), 4)
	replicas := map[string]int{}
	for _, p := range pods {
		replicas[p.Labels[rayv1.LabelWorkerReplicaName]]++
	}
	if len(replicas) != 2 {
		t.Errorf("replicas = %v, want 2 of 2 hosts", replicas)
	}
	if err := w.Client.Get(context.Background(), client.ObjectKey{Namespace: w.NS, Name: "multi-headless"}, &corev1.Service{}); err != nil {
		t.Errorf("headless Service: %v", err)
	}
	w.waitStatus("multi", "4 desired workers", func(s *rayv1.RayClusterStatus) bool {
		return s.DesiredWorkerReplicas == 4 && s.MaxWorkerReplicas == 20
	})

	// Scaling down removes a whole replica; losing a host replaces the replica.
	w.edit("multi", func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](1) })
	pods = w.WaitPods("multi", groupLabels("tpu"), 2)
	if pods[0].Labels[rayv1.LabelWorkerReplicaName] != pods[1].Labels[rayv1.LabelWorkerReplicaName] {
		t.Errorf("the two remaining Pods belong to different replicas")
	}
	if err := w.Client.Delete(context.Background(), &pods[0]); err != nil {
		t.Fatal(err)
	}
	w.Eventually("a complete new replica", func() (bool, error) {
		now := w.Pods("multi", groupLabels("tpu"))
		return len(now) == 2 && now[0].Labels[rayv1.LabelWorkerReplicaName] == now[1].Labels[rayv1.LabelWorkerReplicaName] &&
			now[0].Labels[rayv1.LabelWorkerReplicaName] != pods[1].Labels[rayv1.LabelWorkerReplicaName], nil
	})
}

func TestSuspendAndResume(t *testing.T) {
	w := newWorld(t)
	w.Create(w.newCluster("susp", group("small", 2)))
	w.RunPods("susp", 3)
	w.waitStatus("susp", "provisioned", func(s *rayv1.RayClusterStatus) bool { return conditionTrue(s, rayv1.RayClusterProvisioned) })

	w.edit("susp", func(rc *rayv1.RayCluster) { rc.Spec.Suspend = ptr.To(true) })
	rc := w.waitStatus("susp", "suspended", func(s *rayv1.RayClusterStatus) bool {
		return conditionTrue(s, rayv1.RayClusterSuspended) && s.State == rayv1.Suspended
	})
	if conditionTrue(&rc.Status, rayv1.RayClusterSuspending) || conditionTrue(&rc.Status, rayv1.RayClusterProvisioned) {
		t.Errorf("suspended cluster conditions: %+v", rc.Status.Conditions)
	}
	if n := len(w.Pods("susp", nil)); n != 0 {
		t.Errorf("suspended cluster has %d Pods", n)
	}
	w.WaitEvent("susp", "DeletedPod")

	w.edit("susp", func(rc *rayv1.RayCluster) { rc.Spec.Suspend = ptr.To(false) })
	w.RunPods("susp", 3)
	w.waitStatus("susp", "provisioned again", func(s *rayv1.RayClusterStatus) bool {
		return !conditionTrue(s, rayv1.RayClusterSuspended) && conditionTrue(s, rayv1.RayClusterProvisioned)
	})
}

func TestDeletedHeadPodIsRecreated(t *testing.T) {
	w := newWorld(t)
	w.Create(w.newCluster("headless-no-more", group("small", 1)))
	head := w.WaitPods("headless-no-more", headLabels(), 1)[0]
	if err := w.Client.Delete(context.Background(), &head); err != nil {
		t.Fatal(err)
	}
	w.Eventually("a new head Pod", func() (bool, error) {
		heads := w.Pods("headless-no-more", headLabels())
		return len(heads) == 1 && heads[0].Name != head.Name, nil
	})
}

func TestInvalidSpecGetsConditionAndEventAndNoPods(t *testing.T) {
	w := newWorld(t)
	rc := w.newCluster("invalid", group("small", 1))
	rc.Spec.WorkerGroupSpecs = append(rc.Spec.WorkerGroupSpecs, group("small", 1)) // duplicate name
	w.Create(rc)
	rc = w.waitStatus("invalid", "ValidationFailed", func(s *rayv1.RayClusterStatus) bool {
		return meta.IsStatusConditionTrue(s.Conditions, string(rayv1.RayClusterValidationFailed))
	})
	cond := meta.FindStatusCondition(rc.Status.Conditions, string(rayv1.RayClusterValidationFailed))
	if cond.Reason != "InvalidRayClusterSpec" || cond.Message != `worker group names must be unique: "small" is used more than once` {
		t.Errorf("condition = %+v", cond)
	}
	w.WaitEvent("invalid", "InvalidRayClusterSpec")
	if n := len(w.Pods("invalid", nil)); n != 0 {
		t.Errorf("%d Pods created for an invalid cluster", n)
	}

	// Fixing the spec clears the condition and creates the cluster.
	w.edit("invalid", func(rc *rayv1.RayCluster) { rc.Spec.WorkerGroupSpecs[1].GroupName = "other" })
	w.WaitPods("invalid", groupLabels("other"), 1)
	w.waitStatus("invalid", "no ValidationFailed", func(s *rayv1.RayClusterStatus) bool {
		return meta.FindStatusCondition(s.Conditions, string(rayv1.RayClusterValidationFailed)) == nil
	})
}
