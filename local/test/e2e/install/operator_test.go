package install_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/testing/helmchart"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// serviceAccountUser is the user the API server sees for the chart's
// ServiceAccount.
var serviceAccountUser = "system:serviceaccount:" + helmchart.ReleaseNamespace + ":" + helmchart.ReleaseName

// operatorSelector selects the chart's operator Pods.
var operatorSelector = client.MatchingLabels{
	"app.kubernetes.io/name":     helmchart.ReleaseName,
	"app.kubernetes.io/instance": helmchart.ReleaseName,
}

// operatorPods waits until exactly n operator Pods exist, none being
// deleted, all Running and Ready, and returns them.
func (s *suite) operatorPods(t *testing.T, n int) []corev1.Pod {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), helmTimeout)
	defer cancel()
	var pods []corev1.Pod
	err := e2eutil.Poll(ctx, 200*time.Millisecond, func() (bool, error) {
		list := &corev1.PodList{}
		if err := s.Client.List(ctx, list, client.InNamespace(helmchart.ReleaseNamespace), operatorSelector); err != nil {
			return false, err
		}
		pods = list.Items
		ready := 0
		for i := range pods {
			if pods[i].DeletionTimestamp == nil && e2eutil.RunningAndReady(&pods[i]) {
				ready++
			}
		}
		return ready == n && len(pods) == n, fmt.Errorf("%d operator Pods, %d of them Ready and not deleted, want %d", len(pods), ready, n)
	})
	if err != nil {
		s.dumpOperator(t)
		t.Fatal(err)
	}
	return pods
}

// dumpOperator logs the operator Pods, their events and logs.
func (s *suite) dumpOperator(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s.Dump(ctx, t, helmchart.ReleaseNamespace)
}

// logPullToReady logs how long the Pod took from its image pull to Ready,
// by the Pod's events and conditions (seconds).
func (s *suite) logPullToReady(t *testing.T, pod corev1.Pod) {
	t.Helper()
	events := &corev1.EventList{}
	if err := s.Client.List(t.Context(), events, client.InNamespace(pod.Namespace)); err != nil {
		t.Fatal(err)
	}
	var pulling time.Time
	for _, e := range events.Items {
		if e.InvolvedObject.UID != pod.UID {
			continue
		}
		switch e.Reason {
		case "Pulling":
			pulling = e.FirstTimestamp.Time
		case "Pulled":
			t.Logf("Pod %s: %s", pod.Name, e.Message)
		}
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && !pulling.IsZero() {
			t.Logf("Pod %s: Ready %v after its Pulling event (API timestamps, whole seconds)", pod.Name, c.LastTransitionTime.Sub(pulling))
		}
	}
}

// requireOperatorPod checks the Pod runs version's image under the
// chart's ServiceAccount, with no kubeconfig: the in-cluster config
// (the kubernetes Service, the projected token) is all it has.
func requireOperatorPod(t *testing.T, pod corev1.Pod, version string) {
	t.Helper()
	if pod.Spec.ServiceAccountName != helmchart.ReleaseName {
		t.Errorf("Pod %s runs as ServiceAccount %q, want %q", pod.Name, pod.Spec.ServiceAccountName, helmchart.ReleaseName)
	}
	c := pod.Spec.Containers[0]
	if want := shared.repository() + ":" + version; c.Image != want {
		t.Errorf("Pod %s runs image %q, want %q", pod.Name, c.Image, want)
	}
	for _, a := range slices.Concat(c.Command, c.Args) {
		if strings.Contains(a, "kubeconfig") {
			t.Errorf("Pod %s is given a kubeconfig: %q", pod.Name, a)
		}
	}
	for _, e := range c.Env {
		if e.Name == "KUBECONFIG" {
			t.Errorf("Pod %s is given a kubeconfig: %s=%s", pod.Name, e.Name, e.Value)
		}
	}
	for _, st := range pod.Status.ContainerStatuses {
		if !strings.Contains(st.ImageID, "@sha256:") {
			t.Errorf("container %s of Pod %s runs image ID %q, not an image pulled from the registry", st.Name, pod.Name, st.ImageID)
		}
	}
}

// requireActsAsServiceAccount reads the API server's audit log: every
// request the operator made (its user agent) is the ServiceAccount's and
// comes from one of pods' addresses, through the kubernetes Service; and
// some of them are writes.
func (s *suite) requireActsAsServiceAccount(t *testing.T, pods []corev1.Pod) {
	t.Helper()
	events := s.audit(t)
	var ips []string
	for _, p := range pods {
		ips = append(ips, p.Status.PodIP)
	}
	writes, requests := 0, 0
	for _, e := range events {
		if e.UserAgent != operator.UserAgent {
			continue
		}
		requests++
		if e.User.Username != serviceAccountUser {
			t.Errorf("the operator's %s of %s was made as %q, want %q", e.Verb, e.ResourcePath(), e.User.Username, serviceAccountUser)
		}
		if len(e.SourceIPs) == 0 || !slices.Contains(ips, e.SourceIPs[len(e.SourceIPs)-1]) {
			t.Errorf("the operator's %s of %s came from %v, not from the operator Pods' %v", e.Verb, e.ResourcePath(), e.SourceIPs, ips)
		}
		if e.IsWrite() && e.Succeeded() {
			writes++
		}
	}
	if writes == 0 {
		t.Fatalf("the audit log shows no write of the operator (%d requests with its user agent)", requests)
	}
	t.Logf("audit log: %d requests of the operator, %d successful writes, all as %s from %v", requests, writes, serviceAccountUser, ips)
}

// requireWrittenByServiceAccount checks the audit log shows the
// ServiceAccount creating an object of resource in ns: the one named name,
// or with name "" any (a generated name is not in the audit log).
func (s *suite) requireWrittenByServiceAccount(t *testing.T, resource, ns, name string) {
	t.Helper()
	events := s.audit(t)
	for _, e := range events {
		if e.Verb == "create" && e.Succeeded() && e.ResourcePath() == resource && e.Namespace() == ns && e.User.Username == serviceAccountUser &&
			(name == "" || e.ObjectRef.Name == name) {
			return
		}
	}
	t.Errorf("the audit log shows no create of %s %s/%q by %s", resource, ns, name, serviceAccountUser)
}
