// Package rollingupdate plans upgradeStrategy RollingUpdate: the batches in
// which a worker group's out-of-date Pods are replaced, bounded by maxSurge
// and maxUnavailable as a Deployment's rolling update is, never below the
// group's minReplicas, and leaving the Pods the autoscaler named in
// workersToDelete to it.
//
// A worker Pod made under RollingUpdate carries the hash of its group's
// spec (AnnotationTemplateHash); a Pod whose hash differs from the group's
// current one, or that has none, is out of date. The planner is a pure
// function of the group, the strategy and the Pods: the controller asks it
// for one step per pass and carries the step out.
package rollingupdate

import (
	"crypto/sha1" //nolint:gosec // a change detector, not a security measure
	"encoding/base32"
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/clustersize"
	"github.com/ray-operator/ray-operator/internal/podstatus"
)

// AnnotationTemplateHash is the hash of the worker group spec a worker Pod
// was made from; only Pods made under RollingUpdate carry it.
const AnnotationTemplateHash = "ray.io/upgrade-strategy-rolling-hash"

// defaultLimit is maxSurge's and maxUnavailable's default, a Deployment's.
var defaultLimit = intstr.FromString("25%")

// Enabled reports whether spec asks for rolling worker group updates.
func Enabled(spec *rayv1.RayClusterSpec) bool {
	s := spec.UpgradeStrategy
	return s != nil && s.Type != nil && *s.Type == rayv1.RayClusterRollingUpdate
}

// GroupHash hashes what of a worker group goes into its Pods: everything
// but the scale fields (replicas, bounds, workersToDelete, suspend, the
// autoscaler's idle timeout and priority), which change without replacing
// any Pod.
func GroupHash(group *rayv1.WorkerGroupSpec) (string, error) {
	g := group.DeepCopy()
	g.Replicas, g.MinReplicas, g.MaxReplicas, g.Suspend = nil, nil, nil, nil
	g.IdleTimeoutSeconds, g.Priority = nil, nil
	g.ScaleStrategy = rayv1.ScaleStrategy{}
	raw, err := json.Marshal(g)
	if err != nil {
		return "", fmt.Errorf("hashing worker group %s: %w", group.GroupName, err)
	}
	sum := sha1.Sum(raw) //nolint:gosec // see the import
	return base32.HexEncoding.EncodeToString(sum[:]), nil
}

// Limits resolves maxSurge (rounded up) and maxUnavailable (rounded down)
// against a group's desired replicas. When both come to 0 (percentages of
// a small group), maxUnavailable is 1, as for a Deployment.
func Limits(opts *rayv1.RayClusterRollingUpdateOptions, desired int) (surge, unavailable int, err error) {
	s, u := defaultLimit, defaultLimit
	if opts != nil && opts.MaxSurge != nil {
		s = *opts.MaxSurge
	}
	if opts != nil && opts.MaxUnavailable != nil {
		u = *opts.MaxUnavailable
	}
	if surge, err = intstr.GetScaledValueFromIntOrPercent(&s, desired, true); err != nil {
		return 0, 0, fmt.Errorf("upgradeStrategy.rollingUpdate.maxSurge: %w", err)
	}
	if unavailable, err = intstr.GetScaledValueFromIntOrPercent(&u, desired, false); err != nil {
		return 0, 0, fmt.Errorf("upgradeStrategy.rollingUpdate.maxUnavailable: %w", err)
	}
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return surge, unavailable, nil
}

// Input is what one step of a group's update is planned from.
type Input struct {
	// Group is the worker group as the spec says now.
	Group *rayv1.WorkerGroupSpec
	// Options are upgradeStrategy.rollingUpdate (nil: the defaults).
	Options *rayv1.RayClusterRollingUpdateOptions
	// Hash is GroupHash(Group).
	Hash string
	// Pods are the group's Pods, terminating ones included.
	Pods []corev1.Pod
	// ClusterSuspended: a suspending or suspended cluster is not updated.
	ClusterSuspended bool
	// Autoscaling: the Ray autoscaler watches the group, and would
	// terminate Pods beyond maxReplicas (lowering replicas), so the update
	// never surges past maxReplicas.
	Autoscaling bool
}

// Plan is one step of a group's update.
type Plan struct {
	// InProgress says some Pod of the group is out of date: the step, not
	// the ordinary scaling, decides the group's Pods in this pass.
	InProgress bool
	// Delete names the out-of-date Pods to delete now.
	Delete []string
	// Create is how many up-to-date Pods to create now.
	Create int
	// Blocked says no step is possible and none is under way: the limits
	// (with minReplicas) allow neither an extra Pod nor an unready one.
	Blocked bool
	// UpToDate and OutOfDate count the group's live Pods (not terminating,
	// not in workersToDelete) by hash; Desired is the group's replicas.
	UpToDate, OutOfDate, Desired int
}

// podCounts sorts a group's Pods for the planner.
type podCounts struct {
	old, fresh            []corev1.Pod // live Pods, by hash
	total                 int          // every Pod but those in workersToDelete, terminating ones too
	terminating, oldAtAll int
}

func countPods(in *Input) podCounts {
	var c podCounts
	for i := range in.Pods {
		pod := in.Pods[i]
		if slices.Contains(in.Group.ScaleStrategy.WorkersToDelete, pod.Name) {
			continue // the autoscaler's: never counted, never replaced
		}
		c.total++
		upToDate := pod.Annotations[AnnotationTemplateHash] == in.Hash
		if !upToDate {
			c.oldAtAll++
		}
		switch {
		case !pod.DeletionTimestamp.IsZero():
			c.terminating++
		case upToDate:
			c.fresh = append(c.fresh, pod)
		default:
			c.old = append(c.old, pod)
		}
	}
	return c
}

// Step plans one step of a group's update. Up-to-date Pods are created
// while the group has fewer than desired of them and fewer than desired +
// maxSurge Pods in all (terminating ones count: they still hold their
// resources), and with the autoscaler on no more than maxReplicas.
// Out-of-date Pods are deleted, unready ones first, while the
// ready Pods stay at or above max(desired - maxUnavailable, minReplicas)
// (at most desired) and the up-to-date Pods not yet ready are counted as
// missing. Up-to-date Pods are never deleted here: scaling down is the
// ordinary scaling's once the update is done.
func Step(in Input) (Plan, error) {
	if in.ClusterSuspended || clustersize.Suspended(in.Group) {
		return Plan{}, nil
	}
	c := countPods(&in)
	desired := int(clustersize.DesiredReplicas(in.Group))
	plan := Plan{InProgress: c.oldAtAll > 0, UpToDate: len(c.fresh), OutOfDate: len(c.old), Desired: desired}
	if !plan.InProgress {
		return plan, nil
	}
	surge, unavailable, err := Limits(in.Options, desired)
	if err != nil {
		return plan, err
	}
	floor := max(desired-unavailable, min(int(clustersize.MinReplicas(in.Group)), desired))
	freshReady := countReady(c.fresh)
	ceiling := desired + surge
	if in.Autoscaling {
		ceiling = min(ceiling, max(int(clustersize.MaxReplicas(in.Group)), desired))
	}
	plan.Create = max(0, min(ceiling-c.total, desired-len(c.fresh)))
	plan.Delete = victims(c.old, len(c.old)+len(c.fresh)-floor-(len(c.fresh)-freshReady),
		freshReady+countReady(c.old)-floor)
	plan.Blocked = plan.Create == 0 && len(plan.Delete) == 0 && c.terminating == 0 && freshReady == len(c.fresh)
	return plan, nil
}

// victims picks out-of-date Pods to delete: at most maxDown in all, of
// which at most readyBudget ready ones; unready Pods first, then the
// youngest.
func victims(old []corev1.Pod, maxDown, readyBudget int) []string {
	sorted := podstatus.LeastWorkFirst(old)
	var names []string
	for i := range sorted {
		if len(names) >= maxDown {
			break
		}
		if podstatus.RunningAndReady(&sorted[i]) {
			if readyBudget <= 0 {
				break
			}
			readyBudget--
		}
		names = append(names, sorted[i].Name)
	}
	return names
}

func countReady(pods []corev1.Pod) int {
	n := 0
	for i := range pods {
		if podstatus.RunningAndReady(&pods[i]) {
			n++
		}
	}
	return n
}
