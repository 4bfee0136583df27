package installcheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/operator"
	"github.com/ray-operator/ray-operator/internal/syncwriter"
	"github.com/ray-operator/ray-operator/internal/testing/testenv"
)

// WaitTimeout bounds every wait of this package.
const WaitTimeout = 60 * time.Second

// operatorRuns records that RunOperator started an operator.
var operatorRuns atomic.Bool

// RunOperator starts the operator's manager as id, with settings, and
// checks that it takes the leader Lease in id's namespace and reconciles
// the autoscaler sample in clusterNamespace (a new namespace when empty):
// head Pod and Service, the autoscaler's ServiceAccount, Role and
// RoleBinding, without a single "forbidden" from the API server.
func RunOperator(t *testing.T, env *testenv.Env, settings operator.Settings, id Identity, clusterNamespace string) {
	// operator.New registers controller names, which controller-runtime
	// allows once per process: one run per test binary, and with -count > 1
	// only the first run can go.
	if !operatorRuns.CompareAndSwap(false, true) {
		t.Skip("operator.New already ran in this process")
	}
	logs := syncwriter.New(&bytes.Buffer{})
	ctrl.SetLogger(zap.New(zap.WriteTo(logs), zap.UseDevMode(true)))

	// In a Pod the Lease namespace comes from the service account's mount.
	settings.Config.LeaderElectionNamespace = id.Namespace
	// Out of a Pod, free ports instead of the fixed ones.
	settings.Config.MetricsAddr = "0"
	settings.Config.ProbeAddr = "127.0.0.1:0"

	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: id.User(), Groups: id.Groups()}
	mgr, err := operator.New(settings, cfg)
	if err != nil {
		t.Fatalf("operator.New as %s: %v", id.User(), err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})

	Poll(t, "leader Lease held in "+id.Namespace, func(ctx context.Context) (bool, error) {
		lease := &coordinationv1.Lease{}
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: id.Namespace, Name: operator.LeaderElectionID}, lease)
		if apierrors.IsNotFound(err) {
			return false, managerFailed(done)
		}
		return err == nil && lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != "", err
	})

	if clusterNamespace == "" {
		clusterNamespace = env.Namespace(t)
	}
	cluster := Sample(t, "ray-cluster.autoscaler.yaml")
	cluster.Namespace = clusterNamespace
	if a := cluster.Spec.EnableInTreeAutoscaling; a == nil || !*a {
		t.Fatal("the autoscaler sample no longer enables in-tree autoscaling")
	}
	if err := env.Client.Create(t.Context(), cluster); err != nil {
		t.Fatal(err)
	}
	Poll(t, "head Pod, head Service and autoscaler RBAC", func(ctx context.Context) (bool, error) {
		if err := managerFailed(done); err != nil {
			return false, err
		}
		if denied := forbidden(logs.String()); denied != "" {
			return false, fmt.Errorf("the API server denied the operator:\n%s", denied)
		}
		return reconciled(ctx, env.Client, cluster)
	})
	if denied := forbidden(logs.String()); denied != "" {
		t.Errorf("the API server denied the operator:\n%s", denied)
	}
}

// reconciled reports whether the operator has created the head Pod, a
// Service and the autoscaler's ServiceAccount, Role and RoleBinding of
// cluster.
func reconciled(ctx context.Context, c client.Client, cluster *rayv1.RayCluster) (bool, error) {
	ns := cluster.Namespace
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{rayv1.LabelCluster: cluster.Name, rayv1.LabelNodeType: string(rayv1.HeadNode)}); err != nil || len(pods.Items) == 0 {
		return false, err
	}
	svcs := &corev1.ServiceList{}
	if err := c.List(ctx, svcs, client.InNamespace(ns), client.MatchingLabels{rayv1.LabelCluster: cluster.Name}); err != nil || len(svcs.Items) == 0 {
		return false, err
	}
	for _, obj := range []client.Object{&corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}} {
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: cluster.Name}, obj)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
	return true, nil
}

// forbidden returns the log lines that report a request the API server
// refused.
func forbidden(log string) string {
	var lines []string
	for line := range strings.Lines(log) {
		if strings.Contains(strings.ToLower(line), "forbidden") {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "")
}

// managerFailed returns the manager's error when it stopped early.
func managerFailed(done chan error) error {
	select {
	case err := <-done:
		done <- err
		if err == nil {
			return errors.New("manager stopped early without an error")
		}
		return fmt.Errorf("manager stopped early: %w", err)
	default:
		return nil
	}
}

// Poll waits up to WaitTimeout for cond, failing the test on an error or
// the timeout.
func Poll(t testing.TB, what string, cond wait.ConditionWithContextFunc) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, WaitTimeout, true, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
