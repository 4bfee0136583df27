package hostaccess

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func localPV(path string, annotations map[string]string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv", Annotations: annotations},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{
			Local: &corev1.LocalVolumeSource{Path: path},
		}},
	}
}

// TestPersistentVolumeLocation: the node mounts a persistent volume's directory
// only under its volume directory or a shared one, whatever its annotations
// claim, with symlinks followed.
func TestPersistentVolumeLocation(t *testing.T) {
	root := hostTree(t)
	volumes := filepath.Join(root, "volumes")
	if err := os.MkdirAll(filepath.Join(volumes, "pvc-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "outside"), filepath.Join(volumes, "escape")); err != nil {
		t.Fatal(err)
	}
	policy, err := NewPolicy(false, []string{filepath.Join(root, "shared")})
	if err == nil {
		policy, err = policy.WithVolumeDir(volumes)
	}
	if err != nil {
		t.Fatal(err)
	}
	refusal := func(where string) string {
		return `PersistentVolumeForbidden: persistent volume "pv" (` + where + `) is neither under the node's volume directory (` +
			volumes + `) nor under a directory the node shares (--shared-host-dirs: ` + filepath.Join(root, "shared") + `)`
	}
	ours := map[string]string{"pv.kubernetes.io/provisioned-by": "ray-local/local-path"}
	cases := map[string]struct {
		pv      *corev1.PersistentVolume
		loc     Location
		refusal string
	}{
		"a provisioned volume": {pv: localPV(volumes+"/pvc-1", ours), loc: Location{Dir: volumes, Rel: "pvc-1"}},
		"a hostPath volume under a shared directory": {
			pv: &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv"}, Spec: corev1.PersistentVolumeSpec{
				PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: root + "/shared/sub"}}}},
			loc: Location{Dir: root + "/shared", Rel: "sub"},
		},
		"the provisioned-by annotation on an arbitrary path": {pv: localPV("/etc", ours), refusal: refusal("/etc")},
		"the volume directory itself":                        {pv: localPV(volumes, nil), refusal: refusal(volumes)},
		"a .. out of the volume directory": {
			pv: localPV(volumes+"/../outside", ours), refusal: refusal(volumes + "/../outside, resolved " + root + "/outside"),
		},
		"a symlink out of the volume directory": {
			pv: localPV(volumes+"/escape", ours), refusal: refusal(volumes + "/escape, resolved " + root + "/outside"),
		},
		"a relative path": {pv: localPV("data", nil), refusal: `persistent volume "pv": path "data" is not absolute`},
		"an NFS volume": {
			pv: &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv"}, Spec: corev1.PersistentVolumeSpec{
				PersistentVolumeSource: corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "s", Path: "/x"}}}},
			refusal: `persistent volume "pv": the local node mounts only local and hostPath persistent volumes`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			loc, refusal := policy.PersistentVolumeLocation(tc.pv)
			if diff := cmp.Diff(tc.loc, loc); diff != "" {
				t.Errorf("location (-want +got):\n%s", diff)
			}
			if refusal != tc.refusal {
				t.Errorf("refusal = %q, want %q", refusal, tc.refusal)
			}
		})
	}
}

// TestPersistentVolumeLocationWithoutVolumeDir: the zero Policy mounts no
// persistent volume.
func TestPersistentVolumeLocationWithoutVolumeDir(t *testing.T) {
	_, refusal := Policy{}.PersistentVolumeLocation(localPV("/var/lib/x", nil))
	want := `PersistentVolumeForbidden: persistent volume "pv" (/var/lib/x) is neither under the node's volume directory (none) nor under a directory the node shares (--shared-host-dirs: none)`
	if refusal != want {
		t.Errorf("refusal = %q, want %q", refusal, want)
	}
}
