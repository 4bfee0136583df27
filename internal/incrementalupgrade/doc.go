// Package incrementalupgrade holds the rules of a RayService's
// NewClusterWithIncrementalUpgrade strategy, as pure functions: its
// options, the Gateway and HTTPRoute that split traffic between the active
// and the pending cluster, when those objects are ready, how traffic and
// Serve target_capacity move step by step, and when an upgrade is promoted
// or a rollback completes. The RayService controller reads and writes the
// objects; everything it decides about them is decided here.
package incrementalupgrade
