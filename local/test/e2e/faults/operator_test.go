package faults_test

import (
	"bufio"
	"encoding/json"
	"os"
	"time"
)

// operatorArgs are the flags of `make run`'s operator against its own
// cluster (local/test/e2e/cluster starts it in-process with the same):
// dashboards through the API server's proxy, errors on stdout and
// everything in the log file.
//
// Leader election is off: no two operators ever watch one namespace (each
// test runs its own, with --watch-namespace set to the test's namespace,
// and waits for a killed one to exit before it starts the next), and a
// SIGKILLed leader does not release its Lease, so with election on every
// restart would first wait out the Lease (15 s), which measures
// controller-runtime's lease and not the RayJob controller's recovery.
var operatorArgs = []string{
	"--use-kubernetes-proxy", "--enable-leader-election=false",
	"--metrics-addr=0", "--health-probe-bind-address=0",
	"--log-stdout-encoder=console", "--zap-log-level=info",
	"--feature-gates=SidecarSubmitterRestart=true",
}

// workersStarted reads an operator log file (JSON lines, ISO 8601 times)
// for when controller (rayjob, rayservice) started its workers: the new
// operator's caches are synced and that controller reconciles again.
func workersStarted(logFile, controller string) (time.Time, bool) {
	f, err := os.Open(logFile)
	if err != nil {
		return time.Time{}, false
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	lines.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for lines.Scan() {
		var entry struct{ TS, Msg, Controller string }
		if json.Unmarshal(lines.Bytes(), &entry) != nil || entry.Msg != "Starting workers" || entry.Controller != controller {
			continue
		}
		ts, err := time.Parse("2006-01-02T15:04:05.000Z0700", entry.TS)
		return ts, err == nil
	}
	return time.Time{}, false
}
