package install_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/testing/helmchart"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// kuberayUserAgent starts the user agent of KubeRay's operator
// ("kuberay-operator/<version>"); ours is operator.UserAgent.
const kuberayUserAgent = "kuberay-operator/"

// requireCreatedBy checks the audit log shows a create of resource in ns
// by a client whose user agent starts with agent.
func (s *suite) requireCreatedBy(t *testing.T, agent, resource, ns string) {
	t.Helper()
	if len(s.createsBy(t, agent, resource, ns, time.Time{})) == 0 {
		t.Errorf("the audit log shows no create of %s in %s by %s*", resource, ns, agent)
	}
}

// createsBy returns the names of the objects of resource in ns created by
// a client whose user agent starts with agent, since then.
func (s *suite) createsBy(t *testing.T, agent, resource, ns string, since time.Time) []string {
	t.Helper()
	events := s.audit(t)
	var names []string
	for _, e := range events {
		if e.Verb == "create" && e.Succeeded() && e.ResourcePath() == resource && e.Namespace() == ns &&
			strings.HasPrefix(e.UserAgent, agent) && !e.StageTimestamp.Time.Before(since) {
			names = append(names, e.ObjectRef.Name)
		}
	}
	return names
}

// requireNoRayWebhooks fails t when an admission webhook configuration
// still sends Ray objects somewhere: one KubeRay's release left behind
// would refuse or alter them once its Service is gone.
func requireNoRayWebhooks(t *testing.T) {
	t.Helper()
	validating := &admissionregistrationv1.ValidatingWebhookConfigurationList{}
	mutating := &admissionregistrationv1.MutatingWebhookConfigurationList{}
	for _, l := range []client.ObjectList{validating, mutating} {
		if err := shared.Client.List(t.Context(), l); err != nil {
			t.Fatal(err)
		}
	}
	rules := map[string][]admissionregistrationv1.RuleWithOperations{}
	for _, c := range validating.Items {
		for _, w := range c.Webhooks {
			rules[c.Name+"/"+w.Name] = w.Rules
		}
	}
	for _, c := range mutating.Items {
		for _, w := range c.Webhooks {
			rules[c.Name+"/"+w.Name] = w.Rules
		}
	}
	for name, rs := range rules {
		for _, rule := range rs {
			for _, g := range rule.APIGroups {
				if g == rayv1.GroupVersion.Group || g == "*" {
					t.Errorf("after KubeRay's release is gone, webhook %s still applies to %v of %v", name, rule.Resources, rule.APIGroups)
				}
			}
		}
	}
}

// waitWorkers waits until the switch's RayCluster has n worker Pods, all
// Running and Ready and none being deleted, its status saying so, and
// returns the Pods' UIDs.
func (s *suite) waitWorkers(t *testing.T, ns string, n int) map[types.UID]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), rayTimeout)
	defer cancel()
	uids := map[types.UID]string{}
	err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		pods, err := s.RayPods(ctx, ns, switchCluster, string(rayv1.WorkerNode))
		if err != nil {
			return false, err
		}
		clear(uids)
		for i := range pods {
			if pods[i].DeletionTimestamp == nil && e2eutil.RunningAndReady(&pods[i]) {
				uids[pods[i].UID] = pods[i].Name
			}
		}
		rc := &rayv1.RayCluster{}
		if err := s.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: switchCluster}, rc); err != nil {
			return false, err
		}
		st := rc.Status
		want := int32(n) //nolint:gosec // a small count
		done := len(pods) == n && len(uids) == n && st.ReadyWorkerReplicas == want && st.State == rayv1.Ready
		return done, fmt.Errorf("%d worker Pods, %d Ready; status %s with %d ready workers, want %d", len(pods), len(uids), st.State, st.ReadyWorkerReplicas, n)
	})
	if err != nil {
		s.Kube.Dump(context.WithoutCancel(ctx), t, ns)
		t.Fatalf("RayCluster %s/%s: %v", ns, switchCluster, err)
	}
	return uids
}

// scaleWorkers sets the switch's RayCluster's worker replicas to n and
// waits until the new worker Pods are Ready, created by this operator
// (the audit log's user agent) after the change.
func (s *suite) scaleWorkers(t *testing.T, ns string, n int) {
	t.Helper()
	before := s.waitWorkers(t, ns, n-1)
	rc := &rayv1.RayCluster{}
	if err := s.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: switchCluster}, rc); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(rc.DeepCopy())
	rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To(int32(n)) //nolint:gosec // a small count
	changed := time.Now()
	if err := s.Client.Patch(t.Context(), rc, patch); err != nil {
		t.Fatal(err)
	}
	after := s.waitWorkers(t, ns, n)
	t.Logf("workers scaled to %d: Ready %v after the change", n, time.Since(changed).Round(time.Millisecond))
	var added []string
	for uid, name := range after {
		if _, old := before[uid]; !old {
			added = append(added, name)
		}
	}
	created := s.createsBy(t, operator.UserAgent, "pods", ns, changed.Add(-time.Second))
	if len(added) != 1 || len(created) != 1 {
		t.Errorf("scaling to %d workers added the Pods %v; the audit log shows %d Pods created by %s since", n, added, len(created), operator.UserAgent)
	}
}

// teardownRelease leaves the cluster as the suite started it: the
// release uninstalled and the Ray CRDs gone (the test's namespaces were
// deleted before, while the operator ran).
func (s *suite) teardownRelease(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if out, err := helmchart.HelmContext(ctx, t, "uninstall", helmchart.ReleaseName, "--namespace", helmchart.ReleaseNamespace, "--wait",
		"--ignore-not-found", "--kubeconfig", s.Cluster.KubeconfigPath()); err != nil {
		t.Errorf("helm uninstall: %v\n%s", err, out)
	}
	for _, name := range rayCRDs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		crd.Name = name
		if err := s.Client.Delete(ctx, crd); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting CRD %s: %v", name, err)
		}
	}
	err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		list := &apiextensionsv1.CustomResourceDefinitionList{}
		if err := s.Client.List(ctx, list); err != nil {
			return false, err
		}
		for _, c := range list.Items {
			if c.Spec.Group == rayv1.GroupVersion.Group {
				return false, fmt.Errorf("CRD %s is still there", c.Name)
			}
		}
		return true, nil
	})
	if err != nil {
		t.Error(err)
	}
}
