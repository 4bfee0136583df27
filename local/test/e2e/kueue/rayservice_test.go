package kueue_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// rayServiceTimeout bounds a RayService from admission to serving: a Ray
// head starting on the local node and Serve deploying the application.
const rayServiceTimeout = 4 * time.Minute

// TestRayServiceWaitsForAdmission: a RayService with the queue label, as
// Kueue documents it. Kueue's webhook suspends its rayClusterConfig and
// its Workload (one pod set, the head) waits while the ClusterQueue has no
// quota: the operator's cluster for it is suspended and no Pod runs. Once
// the quota is raised Kueue admits the Workload and unsuspends
// rayClusterConfig (adding its pod-set label to the head template); the
// RayService then runs real Ray Serve, becomes Ready and answers through
// its serve Service. No Pod of the RayService was created before the
// admission. The pod-set label is a change of the cluster spec (KubeRay's
// hash, and the operator's, leave out spec.suspend but not template
// labels), so the held cluster is replaced by one that carries it, and
// deleted, as KubeRay does.
func TestRayServiceWaitsForAdmission(t *testing.T) {
	q := shared.newQueue(t, "0", "")
	if err := shared.Client.Create(t.Context(), e2eutil.HelloApp(q.namespace)); err != nil {
		t.Fatal(err)
	}
	rs := e2eutil.HelloRayService(q.namespace, "v1")
	rs.Labels = map[string]string{queueLabel: q.localQueue}
	if err := shared.Client.Create(t.Context(), rs); err != nil {
		t.Fatalf("creating RayService: %v", err)
	}
	if s := rs.Spec.RayClusterSpec.Suspend; s == nil || !*s {
		t.Fatal("Kueue's webhook did not suspend the queued RayService's rayClusterConfig")
	}
	wl := shared.waitWorkload(t, q.namespace, "RayService", rs.Name, time.Minute, "pending for quota", func(wl *unstructured.Unstructured) bool {
		c := condition(wl, "QuotaReserved")
		return c != nil && c.Status == "False"
	})
	if got := podSetNames(wl); got != "head" {
		t.Errorf("Workload %s has pod sets %q, want the head alone", wl.GetName(), got)
	}
	held := waitServiceCluster(t, q.namespace, "a suspended cluster", func(c *rayv1.RayCluster) bool { return c.Status.State == rayv1.Suspended })
	checkNoPods(t, q.namespace)

	raiseQuota(t, q.clusterQueue, "1")
	wl = shared.waitWorkload(t, q.namespace, "RayService", rs.Name, time.Minute, "Admitted", func(wl *unstructured.Unstructured) bool { return isTrue(wl, "Admitted") })
	admitted := condition(wl, "Admitted").LastTransitionTime
	got := waitHello(t, q.namespace, rayServiceTimeout, "serving on one cluster", e2eutil.ServingOneCluster)
	active := got.Status.ActiveServiceStatus.RayClusterName
	if err := e2eutil.HelloServedBy(got, active); err != nil {
		t.Error(err)
	}
	if s := got.Spec.RayClusterSpec.Suspend; s == nil || *s {
		t.Errorf("an admitted RayService's rayClusterConfig.suspend is %v, want false", s)
	}
	answer := serveAnswer(t, q.namespace)
	if answer != "v1" {
		t.Errorf("the serve Service answered %q, want v1", answer)
	}
	checkPodsAfter(t, q.namespace, admitted.Time)
	checkAdmittedCluster(t, q.namespace, active)
	if held.Name != active {
		// Kueue's pod-set label changed the head template: a spec change
		// (as for KubeRay), so the held cluster is replaced, not resumed.
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute+time.Duration(e2eutil.HelloDeletionDelay)*time.Second)
		defer cancel()
		if err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) { return e2eutil.ClusterGone(ctx, shared.Client, q.namespace, held.Name) }); err != nil {
			t.Errorf("the held cluster %s is not deleted after the switch to %s: %v", held.Name, active, err)
		}
	}
	t.Logf("held on suspended cluster %s; serving from %s; answer %q", held.Name, active, answer)
}

// podSetLabel is the label Kueue adds to each admitted pod template
// (sigs.k8s.io/kueue/pkg/controller/constants.PodSetLabel), with its pod
// set's name.
const podSetLabel = "kueue.x-k8s.io/podset"

// checkAdmittedCluster checks that the serving cluster runs unsuspended
// with what Kueue's admission put in rayClusterConfig: the head template
// and the head Pod carry the pod-set label.
func checkAdmittedCluster(t *testing.T, ns, name string) {
	t.Helper()
	c := &rayv1.RayCluster{}
	if err := shared.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, c); err != nil {
		t.Fatal(err)
	}
	if s := c.Spec.Suspend; s != nil && *s {
		t.Errorf("serving cluster %s is suspended", name)
	}
	if got := c.Spec.HeadGroupSpec.Template.Labels[podSetLabel]; got != "head" {
		t.Errorf("serving cluster %s's head template has %s=%q, want head (Kueue's admission)", name, podSetLabel, got)
	}
	pods := &corev1.PodList{}
	if err := shared.Client.List(t.Context(), pods, client.InNamespace(ns), client.MatchingLabels{rayv1.LabelCluster: name, rayv1.LabelNodeType: string(rayv1.HeadNode)}); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 || pods.Items[0].Labels[podSetLabel] != "head" {
		t.Errorf("head Pods of %s: %d, want one labeled %s=head", name, len(pods.Items), podSetLabel)
	}
}

// podSetNames lists the Workload's pod sets, comma-separated.
func podSetNames(wl *unstructured.Unstructured) string {
	var names []string
	sets, _, _ := unstructured.NestedSlice(wl.Object, "spec", "podSets")
	for _, s := range sets {
		names = append(names, fmt.Sprint(s.(map[string]any)["name"]))
	}
	return strings.Join(names, ",")
}

// waitServiceCluster waits until the hello RayService has a RayCluster for
// which cond holds and returns it.
func waitServiceCluster(t *testing.T, ns, what string, cond func(*rayv1.RayCluster) bool) *rayv1.RayCluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var found *rayv1.RayCluster
	err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		list := &rayv1.RayClusterList{}
		if err := shared.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{rayv1.LabelOriginatedFromCRName: e2eutil.HelloName}); err != nil {
			return false, err
		}
		var states []string
		for i := range list.Items {
			c := &list.Items[i]
			if cond(c) {
				found = c
				return true, nil
			}
			states = append(states, fmt.Sprintf("%s: suspend %v, state %q", c.Name, c.Spec.Suspend, c.Status.State))
		}
		return false, fmt.Errorf("clusters %v", states)
	})
	if err != nil {
		t.Fatalf("the RayService has no %s: %v", what, err)
	}
	return found
}

// checkNoPods fails t if the namespace has Pods.
func checkNoPods(t *testing.T, ns string) {
	t.Helper()
	pods := &corev1.PodList{}
	if err := shared.Client.List(t.Context(), pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 0 {
		t.Errorf("%d Pods of a RayService Kueue has not admitted", len(pods.Items))
	}
}

// checkPodsAfter fails t if a Pod of the namespace was created before
// admitted (both at the API server's second resolution).
func checkPodsAfter(t *testing.T, ns string, admitted time.Time) {
	t.Helper()
	pods := &corev1.PodList{}
	if err := shared.Client.List(t.Context(), pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.CreationTimestamp.Time.Before(admitted) {
			t.Errorf("Pod %s was created at %v, before Kueue admitted the RayService at %v", p.Name, p.CreationTimestamp, admitted)
		}
	}
}

// waitHello polls the hello RayService until check passes and returns it.
func waitHello(t *testing.T, ns string, timeout time.Duration, what string, check func(*rayv1.RayService) error) *rayv1.RayService {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	rs := &rayv1.RayService{}
	err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		if err := shared.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: e2eutil.HelloName}, rs); err != nil {
			return false, err
		}
		err := check(rs)
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("RayService %s is not %s: %v", e2eutil.HelloName, what, err)
	}
	return rs
}

// serveAnswer GETs the hello route through the serve Service's ClusterIP
// until it answers 200 (kube-proxy's rules follow the endpoints a moment
// after the Ready condition counts them) and returns the body.
func serveAnswer(t *testing.T, ns string) string {
	t.Helper()
	svc := &corev1.Service{}
	if err := shared.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: e2eutil.HelloName + "-serve-svc"}, svc); err != nil {
		t.Fatalf("the RayService's serve Service: %v", err)
	}
	url := fmt.Sprintf("http://%s%s", net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(e2eutil.HelloServePort)), e2eutil.HelloRoute)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	httpClient := &http.Client{Timeout: 3 * time.Second}
	var body string
	err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			return false, err
		}
		defer func() { _ = resp.Body.Close() }()
		data, err := io.ReadAll(resp.Body)
		body = string(data)
		return err == nil && resp.StatusCode == http.StatusOK, fmt.Errorf("status %d, body %q (%v)", resp.StatusCode, body, err)
	})
	if err != nil {
		t.Fatalf("%s does not answer: %v", url, err)
	}
	return body
}
