package node_test

import (
	"maps"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// layerConf is where the layer pods mount a ConfigMap key by subPath: a
// directory the host's /usr has not (as KubeRay's Redis samples mount
// redis.conf at /usr/local/etc/redis/redis.conf).
const layerConf = "/usr/local/etc/ray-local-layer-test/app.conf"

// layerWritten is the file the layer pods write in their root; it must
// never appear on the host.
const layerWritten = "/ray-local-layer-test-written"

// layerScript prints what a container sees of its layers: the subPath
// file, whether an earlier attempt's write is still there, and what a
// write to its root and below its mount point's directory does. An
// emptyDir counts the attempts: the first one fails, so that the pod's
// restartPolicy starts a second container.
const layerScript = `
n=$(cat /data/n 2>/dev/null || echo 0); n=$((n+1)); echo $n >/data/n
echo "attempt=$n"
echo "conf=$(cat ` + layerConf + `)"
if [ -e ` + layerWritten + ` ]; then echo "earlier=present"; else echo "earlier=absent"; fi
if out=$(touch ` + layerWritten + ` 2>&1); then echo "root=written"; else echo "root=${out##*: }"; fi
if out=$(touch /usr/local/etc/ray-local-layer-test/new 2>&1); then echo "usr=written"; else echo "usr=${out##*: }"; fi
[ "$n" -ge 2 ]
`

// testContainerLayers runs pods that mount a ConfigMap key by subPath
// where the host's root has no such directory, with and without
// readOnlyRootFilesystem, each restarted once.
func testContainerLayers(t *testing.T, c *cluster) {
	_, err := c.cs.CoreV1().ConfigMaps(namespace).Create(t.Context(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "layer-conf"}, Data: map[string]string{"app.conf": "port 6379"},
	}, metav1.CreateOptions{})
	mustCreate(t, err)
	cases := map[string]struct {
		readOnly bool
		want     map[string]string
	}{
		"layer-rw": {want: map[string]string{
			"attempt": "2", "conf": "port 6379", "earlier": "absent", "root": "written", "usr": "written",
		}},
		"layer-ro": {readOnly: true, want: map[string]string{
			"attempt": "2", "conf": "port 6379", "earlier": "absent", "root": "Read-only file system", "usr": "Read-only file system",
		}},
	}
	for name, tc := range cases {
		pod := layerPod(name, tc.readOnly)
		createAndWait(t, c, pod, "Succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
		if diff := cmp.Diff(tc.want, parseLines(kubeletLogs(t, c, name, "main"))); diff != "" {
			t.Errorf("pod %s: what the restarted container sees (-want +got):\n%s", name, diff)
		}
		first := maps.Clone(tc.want)
		first["attempt"] = "1"
		if diff := cmp.Diff(first, parseLines(kubeletLogsQuery(t, c, name, "main", "previous=true"))); diff != "" {
			t.Errorf("pod %s: what the first container saw (-want +got):\n%s", name, diff)
		}
	}
	for _, p := range []string{layerWritten, "/usr/local/etc/ray-local-layer-test"} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s appeared on the host", p)
		}
	}
	deleteAndWait(t, c, "layer-rw", "layer-ro")
}

// layerPod is a pod running layerScript, restarted on failure.
func layerPod(name string, readOnly bool) *corev1.Pod {
	pod := sleepPod(name, layerScript)
	pod.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "layer-conf"}}}},
		{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	ctr := &pod.Spec.Containers[0]
	ctr.VolumeMounts = []corev1.VolumeMount{
		{Name: "conf", MountPath: layerConf, SubPath: "app.conf"},
		{Name: "data", MountPath: "/data"},
	}
	if readOnly {
		ctr.SecurityContext = &corev1.SecurityContext{ReadOnlyRootFilesystem: ptr.To(true)}
	}
	return pod
}
