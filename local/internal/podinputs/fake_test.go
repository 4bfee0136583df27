package podinputs

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
)

// fakeObjects is an in-memory Objects. Its tokens say what they were
// requested for, so that tests read the request from the token file.
type fakeObjects struct {
	secrets    map[string]*corev1.Secret                // by namespace/name
	configMaps map[string]*corev1.ConfigMap             // by namespace/name
	services   map[string][]corev1.Service              // by namespace
	claims     map[string]*corev1.PersistentVolumeClaim // by namespace/name
	pvs        map[string]*corev1.PersistentVolume
	clock      clock.PassiveClock
	issued     int
}

func newFakeObjects(clk clock.PassiveClock, objs ...any) *fakeObjects {
	f := &fakeObjects{secrets: map[string]*corev1.Secret{}, configMaps: map[string]*corev1.ConfigMap{},
		services: map[string][]corev1.Service{}, claims: map[string]*corev1.PersistentVolumeClaim{},
		pvs: map[string]*corev1.PersistentVolume{}, clock: clk}
	for _, o := range objs {
		f.put(o)
	}
	return f
}

func (f *fakeObjects) put(o any) {
	switch o := o.(type) {
	case *corev1.Secret:
		f.secrets[o.Namespace+"/"+o.Name] = o
	case *corev1.ConfigMap:
		f.configMaps[o.Namespace+"/"+o.Name] = o
	case *corev1.Service:
		f.services[o.Namespace] = append(f.services[o.Namespace], *o)
	case *corev1.PersistentVolumeClaim:
		f.claims[o.Namespace+"/"+o.Name] = o
	case *corev1.PersistentVolume:
		f.pvs[o.Name] = o
	default:
		panic(fmt.Sprintf("fakeObjects: unexpected %T", o))
	}
}

func (f *fakeObjects) Secret(_ context.Context, namespace, name string) (*corev1.Secret, error) {
	if s, ok := f.secrets[namespace+"/"+name]; ok {
		return s.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
}

func (f *fakeObjects) ConfigMap(_ context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	if cm, ok := f.configMaps[namespace+"/"+name]; ok {
		return cm.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
}

func (f *fakeObjects) PersistentVolumeClaim(_ context.Context, namespace, name string) (*corev1.PersistentVolumeClaim, error) {
	if c, ok := f.claims[namespace+"/"+name]; ok {
		return c.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "persistentvolumeclaims"}, name)
}

func (f *fakeObjects) PersistentVolume(_ context.Context, name string) (*corev1.PersistentVolume, error) {
	if pv, ok := f.pvs[name]; ok {
		return pv.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "persistentvolumes"}, name)
}

func (f *fakeObjects) Token(_ context.Context, namespace, sa string, req *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	f.issued++
	exp := f.clock.Now().Add(time.Duration(*req.Spec.ExpirationSeconds) * time.Second)
	out := req.DeepCopy()
	out.Status = authenticationv1.TokenRequestStatus{
		Token: fmt.Sprintf("token#%d sa=%s/%s aud=%v exp=%ds pod=%s/%s", f.issued, namespace, sa,
			req.Spec.Audiences, *req.Spec.ExpirationSeconds, req.Spec.BoundObjectRef.Name, req.Spec.BoundObjectRef.UID),
		ExpirationTimestamp: metav1.NewTime(exp),
	}
	return out, nil
}

func (f *fakeObjects) Services(_ context.Context, namespace string) ([]corev1.Service, error) {
	return append([]corev1.Service(nil), f.services[namespace]...), nil
}

var tsName = regexp.MustCompile(`\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\.\d+`)

// tree describes a directory: "-> target" for a symlink (timestamped
// directory names replaced by their timestamp and "*" for the random part),
// "dir 0755" for a directory, "0644 contents" for a file.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = stripRandom(rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "-> " + stripRandom(target)
		case d.IsDir():
			out[rel] = fmt.Sprintf("dir %#o", info.Mode().Perm())
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = fmt.Sprintf("%#o %s", info.Mode().Perm(), data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func stripRandom(p string) string {
	return tsName.ReplaceAllStringFunc(p, func(s string) string { return s[:strings.LastIndexByte(s, '.')] + ".*" })
}

// configError compares ConfigErrors by Reason and Message.
func configError(err error) *ConfigError {
	if err == nil {
		return nil
	}
	ce, ok := err.(*ConfigError)
	if !ok {
		return &ConfigError{Reason: "not a *ConfigError", Message: err.Error()}
	}
	return &ConfigError{Reason: ce.Reason, Message: ce.Message}
}

var cmpConfigError = cmp.Comparer(func(a, b *ConfigError) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Reason == b.Reason && a.Message == b.Message
})

var testTime = time.Date(2026, 11, 23, 17, 0, 0, 0, time.UTC)

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
