package podworker

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Image pulls, as a kubelet reports them: a container whose image is not
// on the machine (a Ray release not installed yet) waits in
// ContainerCreating while it is pulled, with a Pulling event, then a
// Pulled event with the time it took. A failed pull leaves it waiting with
// ErrImagePull and the reason, and from the next pod sync with
// ImagePullBackOff, until the image back-off lets it pull again.
const (
	reasonImagePullBackOff  = "ImagePullBackOff"
	reasonErrImageNeverPull = "ErrImageNeverPull"
	// pullErrorShownFor is how long ErrImagePull shows before
	// ImagePullBackOff: until a kubelet's next sync of the pod.
	pullErrorShownFor = time.Second
)

// pullState is where a container's image pull stands.
type pullState struct {
	// pulling is true while a pull runs.
	pulling bool
	// backOffAt is when a failed pull's ErrImagePull turns
	// ImagePullBackOff; retryAt when the image is pulled again.
	backOffAt, retryAt time.Time
	// fresh marks an image pulled for the next start, which then reports
	// the pull instead of "already present".
	fresh bool
}

// imagePresent says whether c's image is on the machine, ready to start.
func (c *ctr) imagePresent() bool { return c.imageErr == nil && !c.pull.pulling }

// resolveImages resolves every container's image before anything starts.
func (w *Worker) resolveImages() {
	for _, c := range w.allCtrs() {
		w.resolveImage(c)
	}
}

// resolveImage resolves c's image, and pulls it when it is not on the
// machine.
func (w *Worker) resolveImage(c *ctr) {
	img, err := w.deps.Inputs.Image(c.spec.Image)
	if err != nil {
		w.pullFailed(c, err)
		return
	}
	switch {
	case img.RayRelease != "":
		w.startPull(c, img)
	case img.Registry:
		w.registryImage(c, img)
	default:
		c.img, c.imageErr, c.pull = img, nil, pullState{}
	}
}

// registryImage pulls a registry image, or not, as c's imagePullPolicy
// says: Always pulls (the registry says whether the tag moved; the store
// unpacks only a new digest), IfNotPresent pulls unless the node's store
// holds the image (img.RootFS set), Never runs only what it holds, or the
// local image of the reference's rule (Offline).
func (w *Worker) registryImage(c *ctr, img Image) {
	present := img.RootFS != ""
	switch c.spec.ImagePullPolicy {
	case corev1.PullAlways:
		w.startPull(c, img)
	case corev1.PullNever:
		switch {
		case present:
			c.img, c.imageErr, c.pull = img, nil, pullState{}
		case img.Offline != nil && img.Offline.RayRelease == "":
			// The local image of the reference's rule is on the machine.
			c.img, c.imageErr, c.pull = Image{Image: *img.Offline, ID: "local://" + img.Ref}, nil, pullState{}
		default:
			w.neverPull(c)
		}
	default: // IfNotPresent, the API server's default for a tagged image
		if present {
			c.img, c.imageErr, c.pull = img, nil, pullState{}
			return
		}
		w.startPull(c, img)
	}
}

// neverPull leaves c waiting with the kubelet's ErrImageNeverPull; the
// image is looked for again after the image back-off.
func (w *Worker) neverPull(c *ctr) {
	now := w.deps.Clock.Now()
	msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", c.spec.Image)
	c.imageErr = &waitingError{Reason: reasonErrImageNeverPull, Message: msg}
	c.pull = pullState{retryAt: now.Add(w.pullBackOff.next(c.spec.Name, now))}
	w.deps.Recorder.Event(w.Pod(), corev1.EventTypeWarning, reasonErrImageNeverPull, msg)
}

// startPull pulls img for c off the worker's goroutine.
func (w *Worker) startPull(c *ctr, img Image) {
	c.imageErr, c.pull = nil, pullState{pulling: true}
	ref, began, pod := c.spec.Image, w.deps.Clock.Now(), w.Pod()
	w.deps.Recorder.Eventf(pod, corev1.EventTypeNormal, "Pulling", "Pulling image %q", ref)
	ctx, cancel := context.WithCancel(context.Background())
	w.goTracked(func() {
		defer cancel()
		go func() { // the pod's end stops the pull
			select {
			case <-w.done:
				cancel()
			case <-ctx.Done():
			}
		}()
		pulled, err := w.deps.Inputs.Pull(ctx, pod, img)
		w.post(func() { w.pullEnded(c, ref, began, pulled, err) })
	})
}

// pullEnded records the end of c's pull of ref, unless c's image changed
// meanwhile (the new image's resolution decides then).
func (w *Worker) pullEnded(c *ctr, ref string, began time.Time, img Image, err error) {
	if c.spec.Image != ref {
		return
	}
	c.pull.pulling = false
	if err != nil {
		w.pullFailed(c, err)
		return
	}
	took := w.deps.Clock.Since(began).Round(time.Millisecond)
	w.deps.Recorder.Eventf(w.Pod(), corev1.EventTypeNormal, "Pulled", "Successfully pulled image %q in %s (local: %s)", ref, took, img.Local)
	w.pullBackOff.reset(c.spec.Name)
	c.img, c.imageErr, c.pull = img, nil, pullState{fresh: true}
}

// pullFailed leaves c waiting with ErrImagePull and schedules the next
// pull after the image back-off.
func (w *Worker) pullFailed(c *ctr, err error) {
	now := w.deps.Clock.Now()
	c.imageErr = &waitingError{Reason: reasonErrImagePull, Message: err.Error()}
	c.pull = pullState{backOffAt: now.Add(pullErrorShownFor), retryAt: now.Add(w.pullBackOff.next(c.spec.Name, now))}
	pod := w.Pod()
	w.deps.Recorder.Eventf(pod, corev1.EventTypeWarning, "Failed", "Failed to pull image %q: %s", c.spec.Image, c.imageErr.Message)
	w.deps.Recorder.Eventf(pod, corev1.EventTypeWarning, "Failed", "Error: %s", reasonErrImagePull)
}

// retryPulls turns shown pull errors into ImagePullBackOff, and pulls
// again the images whose back-off ended.
func (w *Worker) retryPulls() {
	if w.state.terminalPhase != "" || !w.state.admission.Admitted() {
		return
	}
	now := w.deps.Clock.Now()
	for _, c := range w.allCtrs() {
		switch {
		case c.imageErr == nil || c.finished():
		case !now.Before(c.pull.retryAt):
			w.resolveImage(c)
		case !now.Before(c.pull.backOffAt) && c.imageErr.Reason == reasonErrImagePull:
			w.showPullBackOff(c)
		}
	}
}

// showPullBackOff turns c's ErrImagePull into ImagePullBackOff.
func (w *Worker) showPullBackOff(c *ctr) {
	c.imageErr = &waitingError{
		Reason:  reasonImagePullBackOff,
		Message: fmt.Sprintf("Back-off pulling image %q: %s: %s", c.spec.Image, reasonErrImagePull, c.imageErr.Message),
	}
	pod := w.Pod()
	w.deps.Recorder.Eventf(pod, corev1.EventTypeNormal, "BackOff", "Back-off pulling image %q", c.spec.Image)
	w.deps.Recorder.Eventf(pod, corev1.EventTypeWarning, "Failed", "Error: %s", reasonImagePullBackOff)
}
