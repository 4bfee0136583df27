// Package e2eutil holds what the local cluster's end-to-end suites
// (local/test/e2e/... and the soak, local/test/soak) share: polling for
// what a user would see, a namespace per test that is gone again when the
// test ends, the operator binary run as a child process (operator.go) and
// the hello RayService of the upgrade tests (hello.go).
package e2eutil

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// PollInterval is how often Poll looks again; Ray takes seconds per step.
const PollInterval = time.Second

// NamespaceGoneTimeout bounds the deletion of a test's namespace: its pods
// get their grace period, and the next test needs the CPUs back.
const NamespaceGoneTimeout = 3 * time.Minute

// Poll polls cond every interval until it holds or ctx ends; the error
// says what the last poll saw (cond's error is a description, not a
// reason to stop).
func Poll(ctx context.Context, interval time.Duration, cond func() (bool, error)) error {
	var last error
	err := wait.PollUntilContextCancel(ctx, interval, true, func(context.Context) (bool, error) {
		ok, err := cond()
		last = err
		return ok, nil
	})
	if err != nil {
		return fmt.Errorf("%w (last: %v)", err, last)
	}
	return nil
}

// Namespace creates a namespace for t. When t ends it calls onFailure if
// t failed (to print what the namespace held), deletes the namespace (its
// Pods killed at once) and waits until it is gone, so that the next test
// has the node's CPUs back.
func Namespace(t testing.TB, c client.Client, onFailure func(ctx context.Context, ns string)) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-"}}
	if err := c.Create(t.Context(), ns); err != nil {
		t.Fatalf("creating a namespace: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), NamespaceGoneTimeout)
		defer cancel()
		if t.Failed() && onFailure != nil {
			onFailure(ctx, ns.Name)
		}
		if err := DeleteNamespace(ctx, c, ns.Name); err != nil {
			t.Error(err)
		}
	})
	return ns.Name
}

// DeleteNamespace deletes the namespace, kills the Pods it holds at once
// (grace period 0: a test's Ray Pods shutting down gracefully prove nothing
// once the test is over, and took about 15 s per test), and waits until the
// namespace is gone or ctx ends. Pods created later during the deletion (a
// Redis cleanup Job's) run as usual.
func DeleteNamespace(ctx context.Context, c client.Client, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Delete(ctx, ns); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting namespace %s: %w", name, err)
	}
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(name)); err != nil {
		return fmt.Errorf("listing the Pods of namespace %s: %w", name, err)
	}
	for i := range pods.Items {
		if err := c.Delete(ctx, &pods.Items[i], client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting Pod %s/%s: %w", name, pods.Items[i].Name, err)
		}
	}
	err := Poll(ctx, PollInterval, func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(ns), &corev1.Namespace{})
		return apierrors.IsNotFound(err), err
	})
	if err != nil {
		return fmt.Errorf("namespace %s is not gone: %w", name, err)
	}
	return nil
}

// ClusterGone reports whether the RayCluster name in ns and its Pods are
// gone; while they are not, its error says what is left (for Poll).
func ClusterGone(ctx context.Context, c client.Client, ns, name string) (bool, error) {
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &rayv1.RayCluster{})
	if !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("the RayCluster is still there (%v)", err)
	}
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{rayv1.LabelCluster: name}); err != nil {
		return false, err
	}
	return len(pods.Items) == 0, fmt.Errorf("%d Pods left", len(pods.Items))
}
