package node

import (
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"

	"github.com/ray-operator/ray-operator/local/internal/imagestore"
)

// Image garbage collection with the kubelet's defaults: every
// imageGCPeriod, when the image store's file system is more than
// imageGCHighPercent full, images no pod of the node uses and none used
// within imageGCMinAge are removed, least recently used first, until it is
// imageGCLowPercent full or no such image is left.
const (
	imageGCPeriod      = 5 * time.Minute
	imageGCHighPercent = 85
	imageGCLowPercent  = 80
	imageGCMinAge      = 2 * time.Minute
)

// startImageGC collects the store's images until the node's workers stop.
func (n *Node) startImageGC(store *imagestore.Store, dir string) {
	p := n.prov
	p.all.Add(1)
	go func() {
		defer p.all.Done()
		t := p.deps.Clock.NewTicker(imageGCPeriod)
		defer t.Stop()
		for {
			select {
			case <-p.ctx.Done():
				return
			case <-t.C():
				n.collectImages(store, dir)
			}
		}
	}()
}

// collectImages runs one image garbage collection.
func (n *Node) collectImages(store *imagestore.Store, dir string) {
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		n.log.Error(err, "Image garbage collection: measuring the image file system")
		return
	}
	images, err := store.List()
	if err != nil {
		n.log.Error(err, "Image garbage collection")
		return
	}
	var stored int64
	for _, img := range images {
		stored += img.Size
	}
	bsize := fs.Bsize
	policy, due := imageGCPolicy(int64(fs.Blocks)*bsize, int64(fs.Bavail)*bsize, stored) //nolint:gosec // block counts fit int64
	if !due {
		return
	}
	// A pod's spec names the images it will run, its published status
	// the digests its containers run.
	var pods []*corev1.Pod
	for _, w := range n.prov.allWorkers() {
		pods = append(pods, w.Pod(), w.Published())
	}
	removed, err := store.GC(imagesInUse(pods, store), policy)
	for _, img := range removed {
		n.log.Info("Removed unused image", "image", img.Ref, "digest", img.Digest.String(), "bytes", img.Size)
	}
	if err != nil {
		n.log.Error(err, "Image garbage collection")
	}
}

// imageGCPolicy says whether a file system of total bytes with free bytes
// available is above the high threshold, and how far the store (holding
// stored bytes) must shrink to bring it to the low one.
func imageGCPolicy(total, free, stored int64) (imagestore.GCPolicy, bool) {
	if total <= 0 {
		return imagestore.GCPolicy{}, false
	}
	used := total - free
	if used*100 <= total*imageGCHighPercent {
		return imagestore.GCPolicy{}, false
	}
	toFree := used - total*imageGCLowPercent/100
	return imagestore.GCPolicy{LowBytes: max(stored-toFree, 0), MinAge: imageGCMinAge}, true
}

// imagesInUse are the manifest digests the pods' containers run (their
// statuses' imageIDs) or will run (the images their references resolve to
// in the store).
func imagesInUse(pods []*corev1.Pod, store interface {
	Present(ref string) (imagestore.Image, bool, error)
}) map[v1.Hash]bool {
	inUse := map[v1.Hash]bool{}
	for _, pod := range pods {
		if pod == nil {
			continue
		}
		var refs, ids []string
		for _, c := range pod.Spec.InitContainers {
			refs = append(refs, c.Image)
		}
		for _, c := range pod.Spec.Containers {
			refs = append(refs, c.Image)
		}
		for _, c := range pod.Spec.EphemeralContainers {
			refs = append(refs, c.Image)
		}
		for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses, pod.Status.EphemeralContainerStatuses} {
			for _, s := range statuses {
				ids = append(ids, s.ImageID)
			}
		}
		for _, ref := range refs {
			if img, ok, err := store.Present(ref); err == nil && ok {
				inUse[img.Digest] = true
			}
		}
		for _, id := range ids {
			if _, digest, ok := strings.Cut(id, "@"); ok {
				if h, err := v1.NewHash(digest); err == nil {
					inUse[h] = true
				}
			}
		}
	}
	return inUse
}
