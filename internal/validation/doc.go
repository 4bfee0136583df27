// Package validation checks RayCluster, RayJob, RayService and RayCronJob
// objects before a controller acts on them. KubeRay validates in four
// layers, in this order, and so do we:
//
//  1. Metadata: the name must fit in the names derived from it.
//  2. Spec: the head and worker groups must be well formed and the options
//     must not contradict each other.
//  3. UpgradeOptions: only Recreate, None and RollingUpdate (with sound
//     limits), and only on user-made clusters.
//  4. Status: RayClusterSuspending and RayClusterSuspended are never both
//     true; a RayJob waits for its job id only in InteractiveMode.
//
// The first three are user errors: a controller reports them and waits for
// the user to change the object. The fourth is a transient inconsistency and
// is retried. The messages are KubeRay's, so that users and tools searching
// for them find the same text.
//
// The functions are pure: they read only their arguments and the feature
// gates they are given, so owners reuse them for what they embed: RayJob and
// RayService validation call RayClusterSpec for their cluster specs, and
// RayCronJob validation calls RayJobSpec for its jobTemplate. The functions
// return errors only; each controller keeps its own event reasons.
package validation
