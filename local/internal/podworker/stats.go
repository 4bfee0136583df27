package podworker

// RunningContainer is a container attempt running now: what the kubelet
// API's resource metrics and stats summary report.
type RunningContainer struct {
	// Name is the container's name in the pod.
	Name string
	// Proc is the running attempt.
	Proc Process
}

// RunningContainers lists the pod's running attempts (init containers
// included), in the pod's order; none once the worker has ended.
func (w *Worker) RunningContainers() []RunningContainer {
	var running []RunningContainer
	_ = w.ask(func() error {
		for _, c := range w.allCtrs() {
			if c.running() {
				running = append(running, RunningContainer{Name: c.spec.Name, Proc: c.proc})
			}
		}
		return nil
	})
	return running
}
