package podworker

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// applySpec takes up the latest containers of the pod. The image is the
// only field of a container the API lets change: a container whose image
// changed resolves it again (one with no local equivalent then waits with
// ErrImagePull), and if it runs it is killed and restarted at once with the
// new image whatever the restart policy, as a kubelet restarts a container
// whose spec hash changed. One that does not run starts with it, without
// waiting for its crash-loop back-off (a new spec starts a new back-off).
func (w *Worker) applySpec() {
	if w.state.terminalPhase != "" {
		return
	}
	images := containerImages(w.Pod())
	for _, c := range w.allCtrs() {
		image, ok := images[c.spec.Name]
		if !ok || image == c.spec.Image {
			continue
		}
		c.spec.Image = image
		w.resolveImage(c)
		w.crashLoop.forget(c.spec.Name)
		switch {
		case c.running():
			c.specChanged = true
			w.kill(c, fmt.Sprintf("Container %s definition changed, will be restarted", c.spec.Name))
		case !c.finished(): // no back-off for the new spec
			c.notBefore, c.waiting = time.Time{}, nil
		}
	}
}

// containerImages maps the names of pod's init containers and containers to
// their images.
func containerImages(pod *corev1.Pod) map[string]string {
	out := make(map[string]string, len(pod.Spec.InitContainers)+len(pod.Spec.Containers))
	for _, c := range pod.Spec.InitContainers {
		out[c.Name] = c.Image
	}
	for _, c := range pod.Spec.Containers {
		out[c.Name] = c.Image
	}
	return out
}
