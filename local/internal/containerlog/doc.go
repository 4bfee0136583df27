// Package containerlog places and reads the log files of container attempts
// in the CRI format a kubelet's container runtime writes
// ("<RFC3339Nano> stdout|stderr F|P <line>"). The pod worker creates one
// file per attempt, which the container's monitor (conmon) writes; the
// kubelet API reads them for `kubectl logs` (tail, since, limitBytes,
// timestamps, follow).
package containerlog
