package podinputs

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ray-operator/ray-operator/internal/testing/capability"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// setUpVolumes runs Volumes on pod with objs, on the clock of objs, below a temporary
// directory, and releases them when the test ends.
func setUpVolumes(t *testing.T, objs *fakeObjects, pod *corev1.Pod) (*PodVolumes, string) {
	t.Helper()
	return setUpVolumesWith(t, objs, pod, testFacts())
}

// setUpVolumesWith is setUpVolumes with facts.
func setUpVolumesWith(t *testing.T, objs *fakeObjects, pod *corev1.Pod, facts PodFacts) (*PodVolumes, string) {
	t.Helper()
	dir := t.TempDir()
	clk, ok := objs.clock.(*clocktesting.FakeClock)
	if !ok {
		clk = clocktesting.NewFakeClock(testTime)
	}
	v, err := VolumesAt(t.Context(), clk, objs, pod, dir, facts)
	if err != nil {
		t.Fatalf("Volumes: %v", err)
	}
	t.Cleanup(func() {
		if err := v.Release(); err != nil {
			t.Error(err)
		}
	})
	return v, dir
}

func volume(name string, src corev1.VolumeSource) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: src}
}

func TestVolumesConfigMapAndSecret(t *testing.T) {
	clk := clocktesting.NewFakeClock(testTime)
	objs := newFakeObjects(clk,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ray", Name: "code"},
			Data:       map[string]string{"app.py": "print(1)\n", "conf.yaml": "a: 1\n"},
			BinaryData: map[string][]byte{"blob.bin": {0, 1, 2}}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ray", Name: "creds"},
			Data: map[string][]byte{"password": []byte("s3cret"), "user": []byte("ray")}},
	)
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{
		volume("code", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "code"}}}),
		volume("picked", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "code"},
			DefaultMode:          ptr.To[int32](0o440),
			Items: []corev1.KeyToPath{
				{Key: "app.py", Path: "src/main.py", Mode: ptr.To[int32](0o755)},
				{Key: "conf.yaml", Path: "conf.yaml"},
			}}}),
		volume("creds", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: "creds", DefaultMode: ptr.To[int32](0o400),
			Items: []corev1.KeyToPath{{Key: "password", Path: "pw"}}}}),
		volume("maybe", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "absent", Optional: ptr.To(true)}}),
	}
	v, dir := setUpVolumes(t, objs, pod)
	want := map[string]string{
		"code":                                       "dir 0755",
		"code/..2026_11_23_17_00_00.*":               "dir 0755",
		"code/..2026_11_23_17_00_00.*/app.py":        "0644 print(1)\n",
		"code/..2026_11_23_17_00_00.*/conf.yaml":     "0644 a: 1\n",
		"code/..2026_11_23_17_00_00.*/blob.bin":      "0644 \x00\x01\x02",
		"code/..data":                                "-> ..2026_11_23_17_00_00.*",
		"code/app.py":                                "-> ..data/app.py",
		"code/conf.yaml":                             "-> ..data/conf.yaml",
		"code/blob.bin":                              "-> ..data/blob.bin",
		"picked":                                     "dir 0755",
		"picked/..2026_11_23_17_00_00.*":             "dir 0755",
		"picked/..2026_11_23_17_00_00.*/src":         "dir 0755",
		"picked/..2026_11_23_17_00_00.*/src/main.py": "0755 print(1)\n",
		"picked/..2026_11_23_17_00_00.*/conf.yaml":   "0440 a: 1\n",
		"picked/..data":                              "-> ..2026_11_23_17_00_00.*",
		"picked/src":                                 "-> ..data/src",
		"picked/conf.yaml":                           "-> ..data/conf.yaml",
		"creds":                                      "dir 0755",
		"creds/..2026_11_23_17_00_00.*":              "dir 0755",
		"creds/..2026_11_23_17_00_00.*/pw":           "0400 s3cret",
		"creds/..data":                               "-> ..2026_11_23_17_00_00.*",
		"creds/pw":                                   "-> ..data/pw",
		"maybe":                                      "dir 0755",
		"maybe/..2026_11_23_17_00_00.*":              "dir 0755",
		"maybe/..data":                               "-> ..2026_11_23_17_00_00.*",
	}
	if diff := cmp.Diff(want, tree(t, dir)); diff != "" {
		t.Errorf("volume tree (-want +got):\n%s", diff)
	}
	wantPaths := map[string]string{"code": dir + "/code", "picked": dir + "/picked", "creds": dir + "/creds", "maybe": dir + "/maybe"}
	if diff := cmp.Diff(wantPaths, v.Paths); diff != "" {
		t.Errorf("Paths (-want +got):\n%s", diff)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "picked/src/main.py")); err != nil || string(data) != "print(1)\n" {
		t.Errorf("reading picked/src/main.py through the symlinks = %q, %v", data, err)
	}
}

func TestVolumesDownwardAPIAndKubeAPIAccess(t *testing.T) {
	clk := clocktesting.NewFakeClock(testTime)
	objs := newFakeObjects(clk, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ray", Name: "kube-root-ca.crt"},
		Data: map[string]string{"ca.crt": "-----BEGIN CERTIFICATE-----\n"}})
	pod := testPod(corev1.Container{Name: "ray-head", Resources: corev1.ResourceRequirements{
		Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")}}})
	pod.Spec.Volumes = []corev1.Volume{
		volume("podinfo", corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
			{Path: "annotations", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations"}},
			{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}, Mode: ptr.To[int32](0o600)},
			{Path: "mem_limit_mi", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "ray-head",
				Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}},
		}}}),
		kubeAPIAccess("kube-api-access-x7k2p"),
	}
	_, dir := setUpVolumes(t, objs, pod)
	const ts = "..2026_11_23_17_00_00.*"
	want := map[string]string{
		"podinfo":                                    "dir 0755",
		"podinfo/" + ts:                              "dir 0755",
		"podinfo/" + ts + "/labels":                  "0644 app=\"x\"\nray.io/node-type=\"head\"",
		"podinfo/" + ts + "/annotations":             "0644 note=\"say \\\"hi\\\"\\nbye\"",
		"podinfo/" + ts + "/name":                    "0600 head-abc",
		"podinfo/" + ts + "/mem_limit_mi":            "0644 2048",
		"podinfo/..data":                             "-> " + ts,
		"podinfo/labels":                             "-> ..data/labels",
		"podinfo/annotations":                        "-> ..data/annotations",
		"podinfo/name":                               "-> ..data/name",
		"podinfo/mem_limit_mi":                       "-> ..data/mem_limit_mi",
		"kube-api-access-x7k2p":                      "dir 0755",
		"kube-api-access-x7k2p/" + ts:                "dir 0755",
		"kube-api-access-x7k2p/" + ts + "/token":     "0644 token#1 sa=ray/ray-sa aud=[] exp=3607s pod=head-abc/uid-1",
		"kube-api-access-x7k2p/" + ts + "/ca.crt":    "0644 -----BEGIN CERTIFICATE-----\n",
		"kube-api-access-x7k2p/" + ts + "/namespace": "0644 ray",
		"kube-api-access-x7k2p/..data":               "-> " + ts,
		"kube-api-access-x7k2p/token":                "-> ..data/token",
		"kube-api-access-x7k2p/ca.crt":               "-> ..data/ca.crt",
		"kube-api-access-x7k2p/namespace":            "-> ..data/namespace",
	}
	if diff := cmp.Diff(want, tree(t, dir)); diff != "" {
		t.Errorf("volume tree (-want +got):\n%s", diff)
	}
}

// kubeAPIAccess is the volume the API server's admission adds to every pod.
func kubeAPIAccess(name string) corev1.Volume {
	return volume(name, corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To[int32](0o644),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr.To[int64](3607), Path: "token"}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		},
	}})
}

func TestRefreshSwapsData(t *testing.T) {
	clk := clocktesting.NewFakeClock(testTime)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ray", Name: "serve"},
		Data: map[string]string{"old.py": "v1", "kept.py": "v1"}}
	objs := newFakeObjects(clk, cm)
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{volume("serve", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "serve"}}})}
	v, dir := setUpVolumes(t, objs, pod)
	before, _ := os.Readlink(filepath.Join(dir, "serve/..data"))

	// Unchanged contents are not written again.
	clk.Step(time.Minute)
	if err := v.Refresh(t.Context(), objs, pod, testFacts()); err != nil {
		t.Fatal(err)
	}
	if same, _ := os.Readlink(filepath.Join(dir, "serve/..data")); same != before {
		t.Errorf("..data moved from %s to %s without a change", before, same)
	}

	// A change is a new timestamped directory; gone keys lose their symlink.
	clk.Step(time.Minute)
	cm.Data = map[string]string{"kept.py": "v2", "new.py": "v2"}
	if err := v.Refresh(t.Context(), objs, pod, testFacts()); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"serve":                                 "dir 0755",
		"serve/..2026_11_23_17_02_00.*":         "dir 0755",
		"serve/..2026_11_23_17_02_00.*/kept.py": "0644 v2",
		"serve/..2026_11_23_17_02_00.*/new.py":  "0644 v2",
		"serve/..data":                          "-> ..2026_11_23_17_02_00.*",
		"serve/kept.py":                         "-> ..data/kept.py",
		"serve/new.py":                          "-> ..data/new.py",
	}
	if diff := cmp.Diff(want, tree(t, dir)); diff != "" {
		t.Errorf("volume tree after the update (-want +got):\n%s", diff)
	}

	// A ConfigMap that is gone keeps the last contents and is reported.
	delete(objs.configMaps, "ray/serve")
	err := v.Refresh(t.Context(), objs, pod, testFacts())
	wantErr := &ConfigError{Reason: ReasonContainerCreating, Message: `MountVolume.SetUp failed for volume "serve" : configmap "serve" not found`}
	if diff := cmp.Diff(wantErr, configError(err), cmpConfigError); diff != "" {
		t.Errorf("Refresh error (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, tree(t, dir)); diff != "" {
		t.Errorf("volume tree after the ConfigMap was deleted (-want +got):\n%s", diff)
	}
}

func TestRefreshRenewsTokensAt80Percent(t *testing.T) {
	clk := clocktesting.NewFakeClock(testTime)
	objs := newFakeObjects(clk)
	pod := testPod()
	pod.Spec.ServiceAccountName = ""
	pod.Spec.Volumes = []corev1.Volume{volume("token", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To[int32](0o600),
		Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
			Audience: "vault", ExpirationSeconds: ptr.To[int64](1000), Path: "vault/token"}}},
	}})}
	v, dir := setUpVolumes(t, objs, pod)
	read := func() string {
		data, err := os.ReadFile(filepath.Join(dir, "token/vault/token"))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	first := "token#1 sa=ray/default aud=[vault] exp=1000s pod=head-abc/uid-1"
	steps := []struct {
		after time.Duration
		want  string
	}{
		{0, first},
		{799 * time.Second, first},
		{time.Second, "token#2 sa=ray/default aud=[vault] exp=1000s pod=head-abc/uid-1"},
		{799 * time.Second, "token#2 sa=ray/default aud=[vault] exp=1000s pod=head-abc/uid-1"},
		{time.Second, "token#3 sa=ray/default aud=[vault] exp=1000s pod=head-abc/uid-1"},
	}
	for i, s := range steps {
		clk.Step(s.after)
		if err := v.Refresh(t.Context(), objs, pod, testFacts()); err != nil {
			t.Fatal(err)
		}
		if got := read(); got != s.want {
			t.Errorf("step %d (%v later): token = %q, want %q", i, s.after, got, s.want)
		}
	}
	info, err := os.Stat(filepath.Join(dir, "token/vault/token"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("token file mode = %v, %v; want 0600", info.Mode().Perm(), err)
	}
}

// TestVolumesEmptyDirAndHostPath: an emptyDir is a directory of the pod's;
// a hostPath volume is a bind mount of the shared path, created as its type
// says (no type: a directory, as containerd creates a missing source).
func TestVolumesEmptyDirAndHostPath(t *testing.T) {
	needRoot(t)
	facts, host := sharedPolicy(t)
	if err := os.WriteFile(filepath.Join(host, "file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{
		volume("scratch", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}),
		volume("made", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: filepath.Join(host, "made/deep"), Type: ptr.To(corev1.HostPathDirectoryOrCreate)}}),
		volume("touched", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: filepath.Join(host, "touched"), Type: ptr.To(corev1.HostPathFileOrCreate)}}),
		volume("file", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: filepath.Join(host, "file"), Type: ptr.To(corev1.HostPathFile)}}),
		volume("any", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: filepath.Join(host, "any")}}),
	}
	dir := t.TempDir()
	v, err := Volumes(t.Context(), newFakeObjects(nil), pod, dir, facts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := v.Release(); err != nil {
			t.Error(err)
		}
	})
	wantPaths := map[string]string{}
	for _, vol := range pod.Spec.Volumes {
		wantPaths[vol.Name] = filepath.Join(dir, vol.Name)
	}
	if diff := cmp.Diff(wantPaths, v.Paths); diff != "" {
		t.Errorf("Paths (-want +got):\n%s", diff)
	}
	wantHost := map[string]string{"any": "dir 0755", "file": "0644 x", "made": "dir 0755", "made/deep": "dir 0755", "touched": "0644 "}
	if diff := cmp.Diff(wantHost, tree(t, host)); diff != "" {
		t.Errorf("host dir (-want +got):\n%s", diff)
	}
	// The pod's directory shows the hostPath volumes through their mounts.
	wantTree := map[string]string{"scratch": "dir 0777", "made": "dir 0755", "touched": "0644 ", "file": "0644 x", "any": "dir 0755"}
	if diff := cmp.Diff(wantTree, tree(t, dir)); diff != "" {
		t.Errorf("pod dir (-want +got):\n%s", diff)
	}
	if err := os.WriteFile(filepath.Join(dir, "made", "new"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(host, "made/deep/new")); err != nil {
		t.Errorf("a file written through the volume is not on the host: %v", err)
	}
	if err := v.Release(); err != nil {
		t.Fatal(err)
	}
	// Released, only the empty mount points are left.
	wantTree = map[string]string{"scratch": "dir 0777", "made": "dir 0711", "touched": "0600 ", "file": "0600 ", "any": "dir 0711"}
	if diff := cmp.Diff(wantTree, tree(t, dir)); diff != "" {
		t.Errorf("pod dir after Release (-want +got):\n%s", diff)
	}
}

func TestVolumesErrors(t *testing.T) {
	objs := newFakeObjects(clocktesting.NewFakeClock(testTime), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ray", Name: "creds"}, Data: map[string][]byte{"user": []byte("ray")}})
	facts, host := sharedPolicy(t)
	cases := []struct {
		name string
		vol  corev1.Volume
		want string
	}{
		{"missing ConfigMap", volume("cfg", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}}}),
			`MountVolume.SetUp failed for volume "cfg" : configmap "absent" not found`},
		{"missing Secret key", volume("creds", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: "creds", Items: []corev1.KeyToPath{{Key: "password", Path: "pw"}}}}),
			`MountVolume.SetUp failed for volume "creds" : references non-existent secret key: password`},
		{"missing projected ConfigMap", kubeAPIAccess("kube-api-access-abcde"),
			`MountVolume.SetUp failed for volume "kube-api-access-abcde" : configmap "kube-root-ca.crt" not found`},
		{"iscsi", volume("data", corev1.VolumeSource{ISCSI: &corev1.ISCSIVolumeSource{TargetPortal: "t", IQN: "i"}}),
			`MountVolume.SetUp failed for volume "data" : iscsi volumes are not supported on the local node`},
		{"hugepages emptyDir", volume("hp", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumHugePages}}),
			`MountVolume.SetUp failed for volume "hp" : emptyDir medium "HugePages" is not supported on the local node`},
		{"hostPath Directory that is a file", volume("h", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: host + "/f", Type: ptr.To(corev1.HostPathDirectory)}}),
			`MountVolume.SetUp failed for volume "h" : hostPath type check failed: ` + host + `/f is not a directory`},
		{"hostPath outside the shared directory", volume("etc", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/etc"}}),
			`MountVolume.SetUp failed for volume "etc" : hostPath volume "etc" (/etc) is not under a directory the node shares (--shared-host-dirs: ` + host + `)`},
		{"hostPath Socket missing", volume("s", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: host + "/sock", Type: ptr.To(corev1.HostPathSocket)}}),
			`MountVolume.SetUp failed for volume "s" : hostPath type check failed: ` + host + `/sock does not exist`},
		{"clusterTrustBundle", volume("ctb", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Name: ptr.To("b"), Path: "b.pem"}}}}}),
			`MountVolume.SetUp failed for volume "ctb" : projected volume source 0 is not supported on the local node (only configMap, secret, downwardAPI and serviceAccountToken)`},
	}
	if err := os.WriteFile(host+"/f", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod()
			pod.Spec.Volumes = []corev1.Volume{tc.vol}
			_, err := Volumes(t.Context(), objs, pod, t.TempDir(), facts)
			want := &ConfigError{Reason: ReasonContainerCreating, Message: tc.want}
			if diff := cmp.Diff(want, configError(err), cmpConfigError); diff != "" {
				t.Errorf("Volumes error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWriteAtomicRejectsEscapingPaths(t *testing.T) {
	for _, p := range []string{"../x", "/etc/passwd", "..data/x", "a/../../b", "a//b", ""} {
		if _, err := writeAtomic(t.TempDir(), payload{p: {data: []byte("x"), mode: 0o644}}, testTime); err == nil ||
			!strings.Contains(err.Error(), "invalid path") {
			t.Errorf("writeAtomic with path %q: error = %v, want an invalid path error", p, err)
		}
	}
}

// TestVolumesOwnedByThePodsRoot: with a VolumeOwner (the host ids of a user
// namespace's root), every file, directory and link of a secret volume
// belongs to it, also after a refresh, so that root in the container reads
// a secret of mode 0400.
func TestVolumesOwnedByThePodsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		capability.Missing(t, "chown needs root (CI runs as root)")
	}
	clk := clocktesting.NewFakeClock(testTime)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ray", Name: "tls"},
		Data: map[string][]byte{"tls.key": []byte("k1")}}
	objs := newFakeObjects(clk, secret)
	pod := testPod()
	pod.Spec.Volumes = []corev1.Volume{volume("tls", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: "tls", DefaultMode: ptr.To[int32](0o400)}})}
	facts := testFacts()
	facts.VolumeOwner = &Owner{UID: 268435456, GID: 268435556}
	v, err := VolumesAt(t.Context(), clk, objs, pod, t.TempDir(), facts)
	if err != nil {
		t.Fatal(err)
	}
	assertOwned(t, v.Paths["tls"], *facts.VolumeOwner)
	secret.Data["tls.key"] = []byte("k2")
	clk.Step(time.Minute)
	if err := v.Refresh(t.Context(), objs, pod, facts); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(v.Paths["tls"], "tls.key")); err != nil || string(b) != "k2" {
		t.Fatalf("after refresh tls.key = %q, %v", b, err)
	}
	assertOwned(t, v.Paths["tls"], *facts.VolumeOwner)
}

func assertOwned(t *testing.T, dir string, want Owner) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		st := info.Sys().(*syscall.Stat_t)
		if int(st.Uid) != want.UID || int(st.Gid) != want.GID {
			t.Errorf("%s is owned by %d:%d, want %d:%d", p, st.Uid, st.Gid, want.UID, want.GID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
