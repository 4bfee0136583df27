package rayjobchaos_test

import (
	"maps"
	"slices"
)

// checkLedger checks what the watches and the dashboards recorded over the
// run, besides what was checked as it happened (two clusters at once, a
// cluster name or a submitter Job created twice):
//
//   - every RayCluster created for a RayJob is one its status named, so
//     one attempt's cluster, created under the name the attempt recorded
//     before creating it;
//   - every Ray job came into being once (once more per time its dashboard
//     lost it), on one cluster, the cluster its RayJob's status paired its
//     submission id with; and each cluster (one attempt) ran one Ray job;
//   - the operator never sent a submission for an id its dashboard had
//     (Ray refuses it, but sending it means the operator lost track of
//     the job).
func checkLedger(w *world, faults *violations) {
	records := w.rec.snapshot()
	owners := map[string]string{}
	for name, jr := range records {
		for _, cluster := range jr.created {
			if !jr.clusterNames[cluster] {
				faults.add(name, "RayCluster %s was created, but the RayJob's status never named it (names: %v)",
					cluster, slices.Sorted(maps.Keys(jr.clusterNames)))
			}
		}
		for id, cluster := range jr.jobIDs {
			owners[id] = name + "/" + cluster
		}
	}
	w.dash.mu.Lock()
	defer w.dash.mu.Unlock()
	byID, byCluster := map[string][]submission{}, map[string]map[string]bool{}
	for _, s := range w.dash.started {
		byID[s.id] = append(byID[s.id], s)
		if byCluster[s.cluster] == nil {
			byCluster[s.cluster] = map[string]bool{}
		}
		byCluster[s.cluster][s.id] = true
	}
	for cluster, ids := range byCluster {
		if len(ids) > 1 {
			faults.add("", "RayCluster %s ran %d Ray jobs: %v", cluster, len(ids), slices.Sorted(maps.Keys(ids)))
		}
	}
	for _, id := range w.dash.inUse {
		faults.add(ownerName(owners[id]), "the operator submitted Ray job %s again while its dashboard had it", id)
	}
	for id, subs := range byID {
		if allowed := 1 + w.dash.vanished[id]; len(subs) > allowed {
			faults.add(ownerName(owners[id]), "Ray job %s started %d times (its dashboard lost it %d times): %v", id, len(subs), allowed-1, subs)
		}
		for _, s := range subs {
			owner := owners[id]
			// A user may submit a job and delete the RayJob before it
			// learns the id; anything else names its cluster.
			if owner == "" && s.by == "user" {
				continue
			}
			if owner == "" || owner[len(ownerName(owner))+1:] != s.cluster {
				faults.add(ownerName(owner), "Ray job %s started on cluster %s by the %s, but its RayJob paired it with %q", id, s.cluster, s.by, owner)
			}
		}
	}
}

// ownerName is the RayJob part of "<rayjob>/<cluster>".
func ownerName(owner string) string {
	for i := range len(owner) {
		if owner[i] == '/' {
			return owner[:i]
		}
	}
	return owner
}
