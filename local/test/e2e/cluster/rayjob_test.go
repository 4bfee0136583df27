package cluster_test

import "time"

// rayJobTimeout bounds a RayJob from apply to a terminal state, and a
// RayCluster from apply to ready: a head and a worker start (about 15 s each
// on an idle 2-core machine), the submitter runs `ray job submit`, and the
// entrypoint runs. The README's K8sJobMode sample, with a worker, runs in
// local/test/e2e/walkthrough through ray-local and kubectl, as a newcomer runs it.
const rayJobTimeout = 8 * time.Minute
