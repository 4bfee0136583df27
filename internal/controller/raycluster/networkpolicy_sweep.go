package raycluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/raynetpol"
)

// networkPolicySweep removes, when the operator starts with the
// RayClusterNetworkPolicy gate off, the NetworkPolicies a run with the gate
// on made: turning the feature off on a live cluster undoes it. KubeRay
// leaves them in place (its NetworkPolicy controller does not run then).
// The gate only changes with a restart, so one sweep at start-up (by the
// leader) is enough; with the gate off nothing creates them again.
type networkPolicySweep struct {
	reader     client.Reader
	writer     client.Writer
	namespaces []string
	// retry paces the attempts after a failed one.
	retry wait.Backoff
}

// sweepRetry retries a failed sweep for about two minutes: long enough for
// an API server that is briefly unavailable at start-up.
var sweepRetry = wait.Backoff{Duration: time.Second, Factor: 2, Steps: 7, Cap: time.Minute}

// networkPolicySweep is the sweep over the watched namespaces, reading
// around the cache (with the gate off nothing caches NetworkPolicies).
func (r *Reconciler) networkPolicySweep(mgr ctrl.Manager) *networkPolicySweep {
	return &networkPolicySweep{reader: r.LiveReader, writer: r.Client, namespaces: r.opts.WatchNamespaces, retry: sweepRetry}
}

// Start sweeps, retrying a failed sweep with backoff unless the operator
// may not list or delete NetworkPolicies. A final failure is logged, not
// returned, so that it does not stop the operator; the next start sweeps
// again.
func (w *networkPolicySweep) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("networkpolicy-sweep")
	removed := 0
	var lastErr error
	err := wait.ExponentialBackoffWithContext(ctx, w.retry, func(ctx context.Context) (bool, error) {
		n, err := w.sweep(ctx)
		removed += n
		lastErr = err
		return err == nil || apierrors.IsForbidden(err), nil
	})
	switch {
	case lastErr == nil && err == nil:
		if removed > 0 {
			log.Info("Removed the NetworkPolicies of RayClusters: the RayClusterNetworkPolicy gate is off", "removed", removed)
		}
	case lastErr != nil:
		log.Error(lastErr, "Removing the NetworkPolicies of RayClusters failed; the rest stay until the next start", "removed", removed)
	}
	return nil
}

// sweep deletes the operator's RayCluster NetworkPolicies in the watched
// namespaces (all when none are given) and returns how many it deleted.
func (w *networkPolicySweep) sweep(ctx context.Context) (int, error) {
	namespaces := w.namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	deleted := 0
	var errs []error
	for _, ns := range namespaces {
		list := &networkingv1.NetworkPolicyList{}
		if err := w.reader.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{rayv1.LabelCreatedBy: rayv1.CreatedByOperator},
			client.HasLabels{rayv1.LabelCluster}); err != nil {
			errs = append(errs, fmt.Errorf("listing NetworkPolicies in %q: %w", ns, err))
			continue
		}
		for i := range list.Items {
			p := &list.Items[i]
			if !madeForCluster(p) {
				continue
			}
			err := w.writer.Delete(ctx, p, client.Preconditions{UID: &p.UID})
			if err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("deleting NetworkPolicy %s/%s: %w", p.Namespace, p.Name, err))
				continue
			}
			ctrl.LoggerFrom(ctx).Info("Deleted NetworkPolicy", "object", klog.KObj(p))
			deleted++
		}
	}
	return deleted, errors.Join(errs...)
}

// madeForCluster reports whether p is one raynetpol builds: controlled by
// the RayCluster its ray.io/cluster label names, under one of its names.
func madeForCluster(p *networkingv1.NetworkPolicy) bool {
	cluster := p.Labels[rayv1.LabelCluster]
	owner := metav1.GetControllerOf(p)
	if owner == nil || owner.Kind != rayv1.KindRayCluster || owner.Name != cluster {
		return false
	}
	if gv, err := schema.ParseGroupVersion(owner.APIVersion); err != nil || gv.Group != rayv1.GroupVersion.Group {
		return false
	}
	return p.Name == raynetpol.HeadName(cluster) || strings.HasPrefix(p.Name, raynetpol.WorkerGroupName(cluster, ""))
}
