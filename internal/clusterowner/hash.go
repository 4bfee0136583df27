package clusterowner

import (
	"crypto/sha1" //nolint:gosec // a change detector, not a security measure; KubeRay's hash
	"encoding/base32"
	"encoding/json"
	"fmt"
	"strconv"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

// SpecHash is KubeRay's hash of a cluster spec, base32hex of the SHA-1 of its
// JSON, taken without what changes while a cluster runs and must not make an
// owner replace it: spec.suspend (Kueue), every worker group's replicas,
// minReplicas, maxReplicas and workersToDelete (the autoscaler), the
// tolerations and scheduling gates of every Pod template (schedulers), and
// upgradeStrategy.
func SpecHash(spec *rayv1.RayClusterSpec) (string, error) {
	s := spec.DeepCopy()
	s.Suspend = nil
	s.UpgradeStrategy = nil
	mutePodScheduling(&s.HeadGroupSpec.Template.Spec.Tolerations, &s.HeadGroupSpec.Template.Spec.SchedulingGates)
	for i := range s.WorkerGroupSpecs {
		g := &s.WorkerGroupSpecs[i]
		g.Replicas, g.MinReplicas, g.MaxReplicas, g.ScaleStrategy.WorkersToDelete = nil, nil, nil, nil
		mutePodScheduling(&g.Template.Spec.Tolerations, &g.Template.Spec.SchedulingGates)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("hashing the RayCluster spec: %w", err)
	}
	sum := sha1.Sum(raw) //nolint:gosec // see the import
	return base32.HexEncoding.EncodeToString(sum[:]), nil
}

func mutePodScheduling[T, U any](tolerations *[]T, gates *[]U) {
	*tolerations, *gates = nil, nil
}

// Annotate records on cluster the hash of its own spec and its number of
// worker groups, which Compare reads back.
func Annotate(cluster *rayv1.RayCluster) error {
	hash, err := SpecHash(&cluster.Spec)
	if err != nil {
		return err
	}
	if cluster.Annotations == nil {
		cluster.Annotations = map[string]string{}
	}
	cluster.Annotations[rayv1.LabelHashWithoutReplicas] = hash
	cluster.Annotations[rayv1.LabelNumWorkerGroups] = strconv.Itoa(len(cluster.Spec.WorkerGroupSpecs))
	return nil
}

// SpecMatch is how a cluster compares with the spec its owner wants now.
type SpecMatch int

const (
	// SpecDifferent: something that matters changed; the cluster must be
	// replaced.
	SpecDifferent SpecMatch = iota
	// SpecAppended: only worker groups were added at the end; the cluster
	// can be updated in place.
	SpecAppended
	// SpecSame: nothing that matters changed.
	SpecSame
)

// Compare tells how the spec recorded on cluster by Annotate compares with
// desired. A cluster with no recorded hash compares as different.
func Compare(cluster *rayv1.RayCluster, desired *rayv1.RayClusterSpec) (SpecMatch, error) {
	recorded := cluster.Annotations[rayv1.LabelHashWithoutReplicas]
	full, err := SpecHash(desired)
	if err != nil || full == recorded {
		return SpecSame, err
	}
	n, err := strconv.Atoi(cluster.Annotations[rayv1.LabelNumWorkerGroups])
	if err != nil || n < 0 || n >= len(desired.WorkerGroupSpecs) {
		return SpecDifferent, nil
	}
	prefix := desired.DeepCopy()
	prefix.WorkerGroupSpecs = prefix.WorkerGroupSpecs[:n]
	partial, err := SpecHash(prefix)
	if err != nil || partial != recorded {
		return SpecDifferent, err
	}
	return SpecAppended, nil
}
