package podinputs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/ray-operator/ray-operator/internal/testing/capability"
	"github.com/ray-operator/ray-operator/local/internal/hostaccess"
)

// claimWorld is a volume directory with one provisioned volume, "pv-1",
// bound to claim ray/data, and the facts of a node that mounts it.
type claimWorld struct {
	volumeDir string
	claim     *corev1.PersistentVolumeClaim
	pv        *corev1.PersistentVolume
	facts     PodFacts
}

func newClaimWorld(t *testing.T) *claimWorld {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "pv-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	policy, err := hostaccess.Policy{}.WithVolumeDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	facts := testFacts()
	facts.HostAccess = policy
	return &claimWorld{
		volumeDir: dir,
		claim: &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ray", Name: "data", UID: "claim-uid"},
			Spec:       corev1.PersistentVolumeClaimSpec{VolumeName: "pv-1"},
			Status:     corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound},
		},
		pv: &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "pv-1"},
			Spec: corev1.PersistentVolumeSpec{
				PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: filepath.Join(dir, "pv-1")}},
				ClaimRef:               &corev1.ObjectReference{Namespace: "ray", Name: "data", UID: "claim-uid"},
			},
		},
		facts: facts,
	}
}

func claimVolumeSource(readOnly bool) corev1.VolumeSource {
	return corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data", ReadOnly: readOnly}}
}

// TestClaimVolumeMounts: a bound claim's volume is its PV's directory;
// read-only when the volume or the mount says so; a subPath is created
// below it.
func TestClaimVolumeMounts(t *testing.T) {
	needRoot(t)
	w := newClaimWorld(t)
	objs := newFakeObjects(clocktesting.NewFakeClock(testTime), w.claim, w.pv)
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{volume("data", claimVolumeSource(false)), volume("ro", claimVolumeSource(true))}
	v, dir := setUpVolumesWith(t, objs, pod, w.facts)
	c := &corev1.Container{Name: "main", VolumeMounts: []corev1.VolumeMount{
		{Name: "data", MountPath: "/data"},
		{Name: "data", MountPath: "/logs", SubPath: "logs/head", ReadOnly: true},
		{Name: "ro", MountPath: "/ro"},
	}}
	got, err := Mounts(c, v)
	if err != nil {
		t.Fatal(err)
	}
	want := []Mount{
		{Source: dir + "/data", Destination: "/data"},
		{Source: dir + "/.subpaths/main/1", Destination: "/logs", ReadOnly: true},
		{Source: dir + "/ro", Destination: "/ro", ReadOnly: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mounts (-want +got):\n%s", diff)
	}
	// Each source shows the persistent volume's directory (or the subPath
	// below it, which was created).
	pvDir := filepath.Join(w.volumeDir, "pv-1")
	if err := os.WriteFile(pvDir+"/logs/head/out", nil, 0o644); err != nil {
		t.Fatalf("subPath directory: %v", err)
	}
	for _, m := range got {
		wantNames := []string{"logs"}
		if m.Destination == "/logs" {
			wantNames = []string{"out"}
		}
		if got := names(t, m.Source); !slices.Equal(got, wantNames) {
			t.Errorf("%s shows %v, want %v", m.Source, got, wantNames)
		}
	}
	if err := v.Refresh(t.Context(), objs, pod, w.facts); err != nil {
		t.Errorf("Refresh leaves claim volumes alone, got %v", err)
	}
}

// TestClaimVolumeWaits: the pod's volumes wait, with a message that says
// why, until the claim is bound to a volume the node mounts.
func TestClaimVolumeWaits(t *testing.T) {
	const prefix = `MountVolume.SetUp failed for volume "data" : `
	cases := map[string]struct {
		change func(w *claimWorld)
		want   string
	}{
		"no claim": {change: func(w *claimWorld) { w.claim = nil }, want: `persistentvolumeclaim "data" not found`},
		"unbound claim": {
			change: func(w *claimWorld) { w.claim.Status.Phase, w.claim.Spec.VolumeName = corev1.ClaimPending, "" },
			want:   `persistentvolumeclaim "data" is not bound yet (phase "Pending"): waiting for a persistent volume`,
		},
		"claim being deleted": {
			change: func(w *claimWorld) { w.claim.DeletionTimestamp = &metav1.Time{Time: testTime} },
			want:   `persistentvolumeclaim "data" is being deleted`,
		},
		"volume bound to another claim": {
			change: func(w *claimWorld) { w.pv.Spec.ClaimRef.UID = "other" },
			want:   `persistentvolume "pv-1" is not bound to claim "data"`,
		},
		"a user-made volume on a host path": {
			change: func(w *claimWorld) { w.pv.Spec.Local.Path = "/etc" },
			want: `PersistentVolumeForbidden: persistent volume "pv-1" (/etc) is neither under the node's volume directory (` +
				`VOLUMES) nor under a directory the node shares (--shared-host-dirs: none)`,
		},
		"a volume whose directory is gone": {
			change: func(w *claimWorld) { w.pv.Spec.Local.Path = filepath.Join(w.volumeDir, "gone") },
			want:   `persistentvolume "pv-1": open VOLUMES/gone: no such file or directory`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := newClaimWorld(t)
			tc.change(w)
			var objects []any
			if w.claim != nil {
				objects = append(objects, w.claim)
			}
			objs := newFakeObjects(clocktesting.NewFakeClock(testTime), append(objects, w.pv)...)
			pod := testPod()
			pod.Spec.Volumes = []corev1.Volume{volume("data", claimVolumeSource(false))}
			_, err := Volumes(t.Context(), objs, pod, t.TempDir(), w.facts)
			want := &ConfigError{Reason: ReasonContainerCreating, Message: prefix + strings.ReplaceAll(tc.want, "VOLUMES", w.volumeDir)}
			if diff := cmp.Diff(want, configError(err), cmpConfigError); diff != "" {
				t.Errorf("Volumes error (-want +got):\n%s", diff)
			}
		})
	}
}

// TestClaimVolumeOwnersShift: a volume an earlier pod wrote moves to the
// ids of the next pod's user namespace, id for id, so that the next pod's
// root (and uid 1000) own what they wrote before; subPath directories the
// node creates belong to the pod too.
func TestClaimVolumeOwnersShift(t *testing.T) {
	if os.Geteuid() != 0 {
		capability.Missing(t, "chown needs root (CI runs as root)")
	}
	w := newClaimWorld(t)
	pvDir := filepath.Join(w.volumeDir, "pv-1")
	const first, second = 1 << 28, 1<<28 + 3<<16
	if err := os.MkdirAll(pvDir+"/db", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pvDir+"/db/LOCK", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for p, id := range map[string]int{pvDir: first, pvDir + "/db": first + 1000, pvDir + "/db/LOCK": first} {
		if err := os.Lchown(p, id, id); err != nil {
			t.Fatal(err)
		}
	}
	objs := newFakeObjects(clocktesting.NewFakeClock(testTime), w.claim, w.pv)
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{volume("data", claimVolumeSource(false))}
	w.facts.VolumeOwner = &Owner{UID: second, GID: second + 2000} // fsGroup 2000
	v, _ := setUpVolumesWith(t, objs, pod, w.facts)
	c := &corev1.Container{Name: "main", VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/logs", SubPath: "logs/head"}}}
	if _, err := Mounts(c, v); err != nil {
		t.Fatal(err)
	}
	want := map[string][2]int{
		pvDir: {second, second + 2000}, pvDir + "/db": {second + 1000, second + 1000}, pvDir + "/db/LOCK": {second, second},
		pvDir + "/logs": {second, second + 2000}, pvDir + "/logs/head": {second, second + 2000}, // subPath: as its parent
	}
	for p, ids := range want {
		uid, gid, err := ownerOf(p)
		if err != nil {
			t.Fatal(err)
		}
		if [2]int{uid, gid} != ids {
			t.Errorf("%s is owned by %d:%d, want %d:%d", p, uid, gid, ids[0], ids[1])
		}
	}
}
