package install_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/testing/helmchart"
	"github.com/ray-operator/ray-operator/local/internal/e2eutil"
)

// crds are the chart's CustomResourceDefinitions.
var crds = []string{"rayclusters.ray.io", "rayjobs.ray.io", "rayservices.ray.io", "raycronjobs.ray.io"}

func testUninstall(t *testing.T, r *run) {
	r.startLoop(t)
	before := shared.rayObjects(t, r.serviceNS)
	service := &rayv1.RayService{}
	if err := shared.Client.Get(t.Context(), client.ObjectKey{Namespace: r.serviceNS, Name: e2eutil.HelloName}, service); err != nil {
		t.Fatal(err)
	}
	mark := len(r.loop.Replies())
	_, took := shared.helm(t, "uninstall", r.release.Name, "--namespace", r.release.Namespace, "--wait", "--timeout", helmTimeout.String())
	t.Logf("helm uninstall --wait: %v", took.Round(time.Millisecond))
	shared.waitOperatorGone(t)
	for _, name := range crds {
		if err := shared.Client.Get(t.Context(), client.ObjectKey{Name: name}, &apiextensionsv1.CustomResourceDefinition{}); err != nil {
			t.Errorf("CRD %s after helm uninstall: %v", name, err)
		}
	}
	after := &rayv1.RayService{}
	if err := shared.Client.Get(t.Context(), client.ObjectKey{Namespace: r.serviceNS, Name: e2eutil.HelloName}, after); err != nil || after.UID != service.UID {
		t.Errorf("RayService %s after helm uninstall: UID %q, was %q (%v)", e2eutil.HelloName, after.UID, service.UID, err)
	}
	requireSame(t, "after helm uninstall", before, shared.rayObjects(t, r.serviceNS))
	// The webhook configuration went with the release: with no operator
	// to serve it, failurePolicy Fail would refuse every Ray object.
	if err := shared.Client.Create(t.Context(), validRayCluster(r.serviceNS), client.DryRunAll); err != nil {
		t.Errorf("a dry-run create of a valid RayCluster after helm uninstall: %v", err)
	}
	shared.requireRayPodsReady(t, r.serviceNS)
	// Serving goes on without the operator: wait for a good number of
	// answers after the uninstall.
	answered := r.loop.Answered("v1")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	err := e2eutil.Poll(ctx, 100*time.Millisecond, func() (bool, error) {
		return r.loop.Answered("v1") >= answered+20, fmt.Errorf("%d answers since", r.loop.Answered("v1")-answered)
	})
	if err != nil {
		t.Error(err)
	}
	requireNoFailedRequests(t, r, "from helm uninstall on", mark)
}

// waitOperatorGone waits until the operator's Deployment and Pods are
// gone.
func (s *suite) waitOperatorGone(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), helmTimeout)
	defer cancel()
	err := e2eutil.Poll(ctx, e2eutil.PollInterval, func() (bool, error) {
		err := s.Client.Get(ctx, client.ObjectKey{Namespace: helmchart.ReleaseNamespace, Name: helmchart.ReleaseName}, &appsv1.Deployment{})
		if !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("the Deployment is still there (%v)", err)
		}
		pods := &corev1.PodList{}
		if err := s.Client.List(ctx, pods, client.InNamespace(helmchart.ReleaseNamespace), operatorSelector); err != nil {
			return false, err
		}
		return len(pods.Items) == 0, fmt.Errorf("%d operator Pods left", len(pods.Items))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// requireRayPodsReady fails t unless every Ray Pod of ns runs and is
// Ready.
func (s *suite) requireRayPodsReady(t *testing.T, ns string) {
	t.Helper()
	pods := &corev1.PodList{}
	if err := s.Client.List(t.Context(), pods, client.InNamespace(ns), client.HasLabels{rayv1.LabelNodeType}); err != nil {
		t.Fatal(err)
	}
	for i := range pods.Items {
		if !e2eutil.RunningAndReady(&pods.Items[i]) {
			t.Errorf("Ray Pod %s is not Running and Ready after helm uninstall: %s", pods.Items[i].Name, pods.Items[i].Status.Phase)
		}
	}
}
