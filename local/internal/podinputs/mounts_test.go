package podinputs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestMounts(t *testing.T) {
	needRoot(t)
	clk := clocktesting.NewFakeClock(testTime)
	objs := newFakeObjects(clk, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ray", Name: "redis-conf"},
		Data: map[string]string{"redis.conf": "port 6379\n"}})
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{
		volume("conf", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "redis-conf"}}}),
		volume("logs", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}),
	}
	v, dir := setUpVolumes(t, objs, pod)
	if err := os.Symlink("/etc", filepath.Join(dir, "logs/escape")); err != nil {
		t.Fatal(err)
	}
	env := []string{"POD_NAME=head-abc", "EMPTY="}

	cases := []struct {
		name    string
		mounts  []corev1.VolumeMount
		want    []Mount
		wantErr *ConfigError
		reads   string // what the first source reads, when it is a file
	}{{
		name: "whole volumes; API data volumes are read-only",
		mounts: []corev1.VolumeMount{
			{Name: "conf", MountPath: "/usr/local/etc/redis"},
			{Name: "logs", MountPath: "tmp/ray/"},
			{Name: "logs", MountPath: "/ro", ReadOnly: true},
		},
		want: []Mount{
			{Source: dir + "/conf", Destination: "/usr/local/etc/redis", ReadOnly: true},
			{Source: dir + "/logs", Destination: "/tmp/ray"},
			{Source: dir + "/logs", Destination: "/ro", ReadOnly: true},
		},
	}, {
		name: "subPath of a ConfigMap key is the file itself",
		mounts: []corev1.VolumeMount{
			{Name: "conf", MountPath: "/etc/redis.conf", SubPath: "redis.conf"},
		},
		want:  []Mount{{Source: dir + "/.subpaths/ray-head/0", Destination: "/etc/redis.conf", ReadOnly: true}},
		reads: "port 6379\n",
	}, {
		name: "missing subPath directories are created; subPathExpr expands",
		mounts: []corev1.VolumeMount{
			{Name: "logs", MountPath: "/a", SubPath: "x/y"},
			{Name: "logs", MountPath: "/b", SubPathExpr: "pods/$(POD_NAME)"},
		},
		want: []Mount{
			{Source: dir + "/.subpaths/ray-head/0", Destination: "/a"},
			{Source: dir + "/.subpaths/ray-head/1", Destination: "/b"},
		},
	}, {
		name:   "subPath through a symlink out of the volume",
		mounts: []corev1.VolumeMount{{Name: "logs", MountPath: "/x", SubPath: "escape/passwd"}},
		wantErr: &ConfigError{Reason: ReasonCreateContainerConfigError,
			Message: `failed to prepare subPath for volumeMount "logs" of container "ray-head"`},
	}, {
		name:   "absolute subPath",
		mounts: []corev1.VolumeMount{{Name: "logs", MountPath: "/x", SubPathExpr: "/$(POD_NAME)"}},
		wantErr: &ConfigError{Reason: ReasonCreateContainerConfigError,
			Message: "error SubPath `/head-abc` must not be an absolute path"},
	}, {
		name:   "subPath with ..",
		mounts: []corev1.VolumeMount{{Name: "logs", MountPath: "/x", SubPath: "../conf"}},
		wantErr: &ConfigError{Reason: ReasonCreateContainerConfigError,
			Message: "unable to provision SubPath `../conf`: must not contain '..'"},
	}, {
		name:   "subPathExpr with an empty variable",
		mounts: []corev1.VolumeMount{{Name: "logs", MountPath: "/x", SubPathExpr: "$(EMPTY)/$(NOPE)"}},
		wantErr: &ConfigError{Reason: ReasonCreateContainerConfigError,
			Message: `failed to prepare subPath for volumeMount "logs": missing value for EMPTY, NOPE`},
	}, {
		name:   "unknown volume",
		mounts: []corev1.VolumeMount{{Name: "nope", MountPath: "/x"}},
		wantErr: &ConfigError{Reason: ReasonCreateContainerConfigError,
			Message: `cannot find volume "nope" to mount into container "ray-head"`},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &corev1.Container{Name: "ray-head", VolumeMounts: tc.mounts}
			got, err := ExpandedMounts(c, v, env)
			if diff := cmp.Diff(tc.wantErr, configError(err), cmpConfigError); diff != "" {
				t.Fatalf("ExpandedMounts error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ExpandedMounts (-want +got):\n%s", diff)
			}
			if tc.reads != "" {
				if b, err := os.ReadFile(got[0].Source); err != nil || string(b) != tc.reads {
					t.Errorf("%s reads %q, %v; want %q", got[0].Source, b, err, tc.reads)
				}
			}
		})
	}
	// The last subPath sources show what the subPaths named.
	if err := os.WriteFile(dir+"/.subpaths/ray-head/1/f", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir + "/logs/pods/head-abc/f"); err != nil {
		t.Errorf("a file written in the subPath source is not in the volume: %v", err)
	}
	// The directories a subPath needed exist in the volume, nothing else.
	want := map[string]string{"escape": "-> /etc", "x": "dir 0755", "x/y": "dir 0755", "pods": "dir 0755", "pods/head-abc": "dir 0755", "pods/head-abc/f": "0644 "}
	if diff := cmp.Diff(want, tree(t, filepath.Join(dir, "logs"))); diff != "" {
		t.Errorf("emptyDir after the mounts (-want +got):\n%s", diff)
	}
}

func TestMountsWithoutEnv(t *testing.T) {
	v := &PodVolumes{Paths: map[string]string{"logs": t.TempDir()}}
	c := &corev1.Container{Name: "c", VolumeMounts: []corev1.VolumeMount{{Name: "logs", MountPath: "/x", SubPathExpr: "$(POD)"}}}
	_, err := Mounts(c, v)
	want := &ConfigError{Reason: ReasonCreateContainerConfigError, Message: `failed to prepare subPath for volumeMount "logs": missing value for POD`}
	if diff := cmp.Diff(want, configError(err), cmpConfigError); diff != "" {
		t.Errorf("Mounts error (-want +got):\n%s", diff)
	}
}
