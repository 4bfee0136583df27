// Package containerlog writes and reads the log files of container attempts
// in the CRI format a kubelet's container runtime writes
// ("<RFC3339Nano> stdout|stderr F|P <line>"). The pod worker writes one file
// per attempt as the container's stdout and stderr; the kubelet API reads
// them for `kubectl logs` (tail, since, limitBytes, timestamps, follow).
package containerlog
