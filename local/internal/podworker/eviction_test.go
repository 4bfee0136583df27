package podworker

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// fill writes a file of size bytes in dir.
func fill(t *testing.T, dir string, size int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fill"), make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
}

func storageLimited(c *corev1.Container, q string) {
	c.Resources.Limits = corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse(q)}
}

// limitedTo gives containers a and b ephemeral-storage limits: a's own
// can be exceeded while the pod's (their sum) is not.
func limitedTo(a, b string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		storageLimited(&p.Spec.Containers[0], a)
		storageLimited(&p.Spec.Containers[1], b)
	}
}

func TestLocalStorageEviction(t *testing.T) {
	scratch := func(limit string) corev1.Volume {
		v := corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
		if limit != "" {
			v.EmptyDir.SizeLimit = resource.NewQuantity(0, resource.BinarySI)
			*v.EmptyDir.SizeLimit = resource.MustParse(limit)
		}
		return v
	}
	cases := map[string]struct {
		pod         func(*corev1.Pod)
		write       func(t *testing.T, podDir string, procs []*fakeProc)
		wantMessage string // "" for no eviction
	}{
		"emptyDir over its sizeLimit": {
			pod: func(p *corev1.Pod) { p.Spec.Volumes = []corev1.Volume{scratch("1Mi")} },
			write: func(t *testing.T, dir string, _ []*fakeProc) {
				fill(t, filepath.Join(dir, "volumes", "scratch"), 2<<20)
			},
			wantMessage: `Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". `,
		},
		"emptyDir under its sizeLimit": {
			pod: func(p *corev1.Pod) { p.Spec.Volumes = []corev1.Volume{scratch("4Mi")} },
			write: func(t *testing.T, dir string, _ []*fakeProc) {
				fill(t, filepath.Join(dir, "volumes", "scratch"), 2<<20)
			},
		},
		"a container's writable layer over its ephemeral-storage limit": {
			pod:         limitedTo("1Mi", "4Mi"),
			write:       func(t *testing.T, _ string, procs []*fakeProc) { fill(t, procs[0].WritableDir(), 2<<20) },
			wantMessage: `Container a exceeded its local ephemeral storage limit "1Mi". `,
		},
		"a container's log counts": {
			pod:         limitedTo("1Mi", "4Mi"),
			write:       func(t *testing.T, _ string, procs []*fakeProc) { fill(t, filepath.Dir(procs[0].spec.LogPath), 2<<20) },
			wantMessage: `Container a exceeded its local ephemeral storage limit "1Mi". `,
		},
		"the pod's emptyDirs over its containers' limits together": {
			pod: func(p *corev1.Pod) {
				limitedTo("1Mi", "1Mi")(p)
				p.Spec.Volumes = []corev1.Volume{scratch("")}
			},
			write: func(t *testing.T, dir string, _ []*fakeProc) {
				fill(t, filepath.Join(dir, "volumes", "scratch"), 3<<20)
			},
			wantMessage: "Pod ephemeral local storage usage exceeds the total limit of containers 2Mi. ",
		},
		"no limits: nothing measured counts": {
			pod: func(p *corev1.Pod) { p.Spec.Volumes = []corev1.Volume{scratch("")} },
			write: func(t *testing.T, dir string, _ []*fakeProc) {
				fill(t, filepath.Join(dir, "volumes", "scratch"), 3<<20)
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := makePod(corev1.RestartPolicyAlways, nil, "a", "b")
			tc.pod(pod)
			h := newHarness(t, pod)
			procs := []*fakeProc{h.nextStart("a"), h.nextStart("b")}
			h.waitPod("Running", phaseIs(corev1.PodRunning))
			tc.write(t, h.rt.boxes[0].Dir(), procs)
			h.w.CheckStorage()
			if tc.wantMessage == "" {
				h.settle()
				if got := h.w.Published(); got.Status.Phase != corev1.PodRunning || got.Status.Reason != "" {
					t.Errorf("phase %s, reason %q; want Running, not evicted", got.Status.Phase, got.Status.Reason)
				}
				return
			}
			h.waitEvent("Warning Evicted " + tc.wantMessage)
			got := h.waitPod("stopped", func(p *corev1.Pod) bool {
				return p.Status.Phase == corev1.PodFailed
			})
			if got.Status.Reason != reasonEvicted || got.Status.Message != tc.wantMessage {
				t.Errorf("reason, message = %q, %q; want Evicted, %q", got.Status.Reason, got.Status.Message, tc.wantMessage)
			}
			h.noStart()
		})
	}
}
