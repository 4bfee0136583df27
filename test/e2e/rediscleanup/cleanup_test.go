// Package rediscleanup runs the command of the GCS fault tolerance Redis
// cleanup Job, exactly as internal/rediscleanup builds it, with the real Ray
// from PyPI (hack/ray-venv.sh) against a real redis-server
// (hack/redis-server.sh).
package rediscleanup

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rayv1 "github.com/ray-operator/ray-operator/api/ray/v1"
	"github.com/ray-operator/ray-operator/internal/raypod"
	"github.com/ray-operator/ray-operator/internal/rediscleanup"
)

const (
	venvEnv        = "RAY_OPERATOR_RAY_VENV"
	secretName     = "redis-password"
	secretKey      = "password"
	storageNS      = "cleanup-test-ns"
	runTimeout     = 3 * time.Minute
	clusterPodIP   = "127.0.0.1"
	redisPassword  = "s3cret-pw"
	wrongPassword  = "not-the-password"
	otherStorageNS = storageNS + "-other"
)

// gcsTables are the tables a Ray GCS keeps in Redis. Ray's RedisStoreClient
// stores table T of storage namespace NS as the hash "RAY" + NS + "@" + T
// (HSET/HGET...), and the job counter as the string "RAY" + NS + "@JobCounter"
// (INCRBY); cleanup_redis_storage (RedisDelKeyPrefixSync) SCANs for
// "RAY" + NS + "@*" and DELetes every match.
var gcsTables = []string{"NODE", "JOB", "ACTOR", "ACTOR_TASK_SPEC", "PLACEMENT_GROUP", "KV", "WORKERS"}

func TestCleanupJobDeletesItsNamespace(t *testing.T) {
	venv := os.Getenv(venvEnv)
	if venv == "" {
		t.Fatalf("%s is not set: run `make test-e2e` (hack/ray-venv.sh installs Ray and prints the venv)", venvEnv)
	}
	redis := startRedis(t, redisPassword)
	seed(t, redis, storageNS)
	seed(t, redis, otherStorageNS)
	redis.do(t, "SET", "unrelated", "v")

	job, err := rediscleanup.BuildJob(newCluster(redis.addr), raypod.Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec := job.Spec.Template.Spec
	if len(spec.Containers) != 1 {
		t.Fatalf("cleanup Job has %d containers, want 1", len(spec.Containers))
	}
	c := spec.Containers[0]
	t.Logf("command %q args %q", c.Command, c.Args)

	t.Run("wrong password fails", func(t *testing.T) {
		before := redis.keys(t)
		out, code, elapsed := runContainer(t, venv, job.Spec.Template, wrongPassword)
		t.Logf("exit %d after %s:\n%s", code, elapsed.Round(time.Millisecond), out)
		if code == 0 {
			t.Fatalf("cleanup with a wrong password exited 0; the finalizer would not report the failure")
		}
		if after := redis.keys(t); !sameSet(before, after) {
			t.Errorf("keys changed by a failed cleanup: before %q after %q", before, after)
		}
	})

	t.Run("deletes its namespace only", func(t *testing.T) {
		out, code, elapsed := runContainer(t, venv, job.Spec.Template, redisPassword)
		t.Logf("exit %d after %s:\n%s", code, elapsed.Round(time.Millisecond), out)
		if code != 0 {
			t.Fatalf("cleanup exited %d, want 0", code)
		}
		left := redis.keys(t)
		for _, k := range left {
			if strings.HasPrefix(k, "RAY"+storageNS+"@") {
				t.Errorf("key %q of the cleaned namespace is still there", k)
			}
		}
		want := append(nsKeys(otherStorageNS), "unrelated")
		if !sameSet(left, want) {
			t.Errorf("keys left = %q, want %q", left, want)
		}
		if v := redis.do(t, "HGET", "RAY"+otherStorageNS+"@NODE", "field"); v != "value" {
			t.Errorf("other namespace's NODE hash field = %v, want value", v)
		}
	})

	t.Run("empty namespace succeeds", func(t *testing.T) {
		// Ray 2.60's RedisDelKeyPrefixSync returns true when no key matches
		// ("No keys found for external storage namespace"), so a second run,
		// or the cleanup of a cluster that never wrote to Redis, exits 0 and
		// the finalizer reports no failure.
		out, code, _ := runContainer(t, venv, job.Spec.Template, redisPassword)
		if code != 0 {
			t.Fatalf("cleanup of an empty namespace exited %d, want 0:\n%s", code, out)
		}
		if left := redis.keys(t); !sameSet(left, append(nsKeys(otherStorageNS), "unrelated")) {
			t.Errorf("keys left = %q", left)
		}
	})
}

// seed writes the keys a Ray GCS with storage namespace ns keeps in Redis.
func seed(t *testing.T, r *redisServer, ns string) {
	t.Helper()
	for _, table := range gcsTables {
		r.do(t, "HSET", "RAY"+ns+"@"+table, "field", "value")
	}
	r.do(t, "INCRBY", "RAY"+ns+"@JobCounter", "1")
}

func nsKeys(ns string) []string {
	out := []string{"RAY" + ns + "@JobCounter"}
	for _, table := range gcsTables {
		out = append(out, "RAY"+ns+"@"+table)
	}
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// newCluster is a RayCluster whose GCS fault tolerance points at addr, with
// the password in a Secret (a valueFrom env in the Job) and an explicit
// storage namespace.
func newCluster(addr string) *rayv1.RayCluster {
	return &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "raycluster", Namespace: "default", UID: "uid-1"},
		Spec: rayv1.RayClusterSpec{
			GcsFaultToleranceOptions: &rayv1.GcsFaultToleranceOptions{
				RedisAddress: addr,
				RedisPassword: &rayv1.RedisCredential{ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: secretName}, Key: secretKey,
				}}},
				ExternalStorageNamespace: storageNS,
			},
			HeadGroupSpec: rayv1.HeadGroupSpec{
				RayStartParams: map[string]string{},
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "ray-head", Image: "rayproject/ray:2.60.0",
				}}}},
			},
		},
	}
}

// runContainer runs the container's command and args as built, with its env
// resolved as the kubelet would (secretPassword is the literal of the test's
// Secret), and returns the output, exit code and run time.
//
// The one adaptation to running outside the image: the command is a login
// shell (`bash -lc`), whose /etc/profile resets PATH, and in the Ray image the
// login profile is what puts the image's python first. Here HOME is a fresh
// directory whose .bash_profile puts the venv's bin first instead.
func runContainer(t *testing.T, venv string, tmpl corev1.PodTemplateSpec, secretPassword string) (string, int, time.Duration) {
	t.Helper()
	c := tmpl.Spec.Containers[0]
	home := t.TempDir()
	bin := filepath.Join(venv, "bin")
	profile := fmt.Sprintf("export PATH=%q:\"$PATH\"\n", bin)
	if err := os.WriteFile(filepath.Join(home, ".bash_profile"), []byte(profile), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "PATH=" + bin + ":" + os.Getenv("PATH")}
	resolved := resolveEnv(t, tmpl.ObjectMeta, c.Env, map[string]string{secretName + "/" + secretKey: secretPassword})
	for _, e := range resolved {
		env = append(env, e[0]+"="+e[1])
	}

	argv := slices.Concat(c.Command, c.Args)
	ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = home
	begin := time.Now()
	out, err := cmd.CombinedOutput()
	elapsed := time.Since(begin)
	if ctx.Err() != nil {
		t.Fatalf("cleanup did not finish within %s:\n%s", runTimeout, out)
	}
	code := 0
	if err != nil {
		exitErr, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("running %q: %v", argv, err)
		}
		code = exitErr.ExitCode()
	}
	return string(out), code, elapsed
}

var envRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)`)

// resolveEnv turns the container's env into name/value pairs in order, as the
// kubelet does: literal values with $(VAR) references to earlier variables
// expanded, secretKeyRef from secrets ("name/key" -> literal), and the
// Pod-level fieldRefs with stand-in values for a Pod on 127.0.0.1. Anything
// else fails t, so that a new kind of env in the Job is noticed. Labels and
// annotations come from the Pod template.
func resolveEnv(t *testing.T, meta metav1.ObjectMeta, envs []corev1.EnvVar, secrets map[string]string) [][2]string {
	t.Helper()
	fields := map[string]string{
		"metadata.name": "raycluster-redis-cleanup-x", "metadata.namespace": "default",
		"metadata.uid": "pod-uid", "status.podIP": clusterPodIP, "status.hostIP": clusterPodIP,
		"spec.nodeName": "node", "spec.serviceAccountName": "default",
	}
	for k, v := range meta.Labels {
		fields["metadata.labels['"+k+"']"] = v
	}
	for k, v := range meta.Annotations {
		fields["metadata.annotations['"+k+"']"] = v
	}
	seen := map[string]string{}
	var out [][2]string
	for _, e := range envs {
		var v string
		switch {
		case e.ValueFrom == nil:
			v = envRef.ReplaceAllStringFunc(e.Value, func(m string) string {
				if val, ok := seen[envRef.FindStringSubmatch(m)[1]]; ok {
					return val
				}
				return m
			})
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			val, ok := secrets[ref.Name+"/"+ref.Key]
			if !ok {
				t.Fatalf("env %s refers to secret %s key %s, which the test does not have", e.Name, ref.Name, ref.Key)
			}
			v = val
		case e.ValueFrom.FieldRef != nil:
			val, ok := fields[e.ValueFrom.FieldRef.FieldPath]
			if !ok {
				t.Fatalf("env %s refers to field %s, which the test does not resolve", e.Name, e.ValueFrom.FieldRef.FieldPath)
			}
			v = val
		default:
			t.Fatalf("env %s: unsupported valueFrom %+v", e.Name, e.ValueFrom)
		}
		seen[e.Name] = v
		out = append(out, [2]string{e.Name, v})
	}
	return out
}
