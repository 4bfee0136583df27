package raypod

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
)

func initNames(pod *corev1.Pod) []string {
	var names []string
	for _, c := range pod.Spec.InitContainers {
		names = append(names, c.Name)
	}
	return names
}

func hasVolume(pod *corev1.Pod, name string) bool {
	return slices.ContainsFunc(pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == name })
}

// TestTLSGateAndField: the TLS settings come only with the gate on and
// tlsOptions.enabled true.
func TestTLSGateAndField(t *testing.T) {
	for name, tc := range map[string]struct {
		enabled *bool
		gate    bool
		want    bool
	}{
		"gate off":       {enabled: ptr.To(true)},
		"field unset":    {gate: true},
		"enabled false":  {enabled: ptr.To(false), gate: true},
		"gate and field": {enabled: ptr.To(true), gate: true, want: true},
	} {
		t.Run(name, func(t *testing.T) {
			c := newCluster(func(c *rayv1.RayCluster) {
				if tc.enabled != nil {
					c.Spec.TLSOptions = &rayv1.TLSOptions{Enabled: tc.enabled}
				}
			})
			for _, pod := range []*corev1.Pod{buildHead(t, c, Options{MTLS: tc.gate}), buildWorker(t, c, WorkerIndex{}, Options{MTLS: tc.gate})} {
				got := hasVolume(pod, TLSVolumeName) || slices.Contains(initNames(pod), WaitForTLSIPSANName) ||
					hasEnv(pod.Spec.Containers[0].Env, EnvUseTLS)
				if got != tc.want {
					t.Errorf("%s Pod has TLS settings = %v, want %v", pod.Labels[rayv1.LabelNodeType], got, tc.want)
				}
			}
		})
	}
}

// TestTLSPodSettings: the IP SAN wait runs first with the Ray container's
// image, pull policy and security context; the Ray container,
// wait-gcs-ready and the autoscaler get the variables and mount; a user's
// mount at the certificate path is kept instead of a second one.
func TestTLSPodSettings(t *testing.T) {
	c := newCluster(func(c *rayv1.RayCluster) {
		c.Spec.TLSOptions = &rayv1.TLSOptions{Enabled: ptr.To(true)}
		c.Spec.EnableInTreeAutoscaling = ptr.To(true)
		rc := headContainer(c)
		rc.ImagePullPolicy = corev1.PullAlways
		rc.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To[int64](1000)}
		w := workerContainer(c)
		w.VolumeMounts = append(w.VolumeMounts, corev1.VolumeMount{Name: "mine", MountPath: TLSMountPath})
	})
	head := buildHead(t, c, Options{MTLS: true})
	wait := head.Spec.InitContainers[0]
	if wait.Name != WaitForTLSIPSANName || wait.ImagePullPolicy != corev1.PullAlways || *wait.SecurityContext.RunAsUser != 1000 {
		t.Errorf("head wait container = %s, %s, %v", wait.Name, wait.ImagePullPolicy, wait.SecurityContext)
	}
	wantEnv := []string{EnvUseTLS, EnvTLSServerCert, EnvTLSServerKey, EnvTLSCACert}
	for _, name := range []string{head.Spec.Containers[0].Name, AutoscalerContainerName} {
		i := containerIndex(head.Spec.Containers, name)
		ctr := head.Spec.Containers[i]
		if !slices.ContainsFunc(ctr.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == TLSVolumeName && m.ReadOnly }) {
			t.Errorf("%s lacks the TLS mount: %v", name, ctr.VolumeMounts)
		}
		for _, e := range wantEnv {
			if !hasEnv(ctr.Env, e) {
				t.Errorf("%s lacks %s", name, e)
			}
		}
	}
	worker := buildWorker(t, c, WorkerIndex{}, Options{MTLS: true})
	if diff := cmp.Diff([]string{WaitForTLSIPSANName, waitGCSReadyName}, initNames(worker)); diff != "" {
		t.Errorf("worker init containers (-want +got):\n%s", diff)
	}
	var atPath []string
	for _, m := range worker.Spec.Containers[0].VolumeMounts {
		if m.MountPath == TLSMountPath {
			atPath = append(atPath, m.Name)
		}
	}
	if diff := cmp.Diff([]string{"mine"}, atPath); diff != "" {
		t.Errorf("worker mounts at %s (-want +got):\n%s", TLSMountPath, diff)
	}
	if v := worker.Spec.Volumes[slices.IndexFunc(worker.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == TLSVolumeName })]; v.Secret.SecretName != "ray-worker-secret-raycluster" {
		t.Errorf("worker TLS volume Secret = %s", v.Secret.SecretName)
	}
}

func TestWithoutTLSWait(t *testing.T) {
	got := WithoutTLSWait([]corev1.Container{{Name: WaitForTLSIPSANName}, {Name: "user"}})
	if diff := cmp.Diff([]corev1.Container{{Name: "user"}}, got); diff != "" {
		t.Error(diff)
	}
}
