// Package clusterowner is what every kind that owns RayClusters shares:
// RayJob and RayService directly, RayCronJob through the RayJobs it creates.
//
//   - Build makes the RayCluster an owner asks for (owner labels and
//     annotations, ray.io/originated-from-*, the owner as controller).
//   - SpecHash and Compare tell whether a cluster still matches its owner's
//     spec, ignoring what autoscaling and Kueue change; Annotate records the
//     hash on the cluster (ray.io/hash-without-replicas-and-workers-to-delete
//     and ray.io/num-worker-groups).
//   - Clusters gets, creates, updates, lists and deletes owned clusters and
//     keeps the owner's Services pointing at the cluster that serves, with
//     KubeRay's events on the owner.
//
// There is one copy of each of these; controllers call them and add only
// what is theirs (a RayJob's submitter sidecar, a RayService's upgrades).
package clusterowner
