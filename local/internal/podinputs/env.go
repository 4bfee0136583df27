package podinputs

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Env is a container's environment, KEY=VALUE, as the container runtime
// gives it: the image's variables, overridden by the service link variables,
// overridden by the container's envFrom and env (a later entry overriding an
// earlier one). $(VAR) in an env value expands against the envFrom and
// earlier env variables, then the service link variables. A missing Secret,
// ConfigMap or key that is not optional is a *ConfigError with reason
// CreateContainerConfigError; envFrom keys that are not valid variable
// names are skipped, as a kubelet skips them.
func Env(ctx context.Context, objs Objects, pod *corev1.Pod, c *corev1.Container, img Image, facts PodFacts) ([]string, error) {
	links, err := serviceLinks(ctx, objs, pod, facts)
	if err != nil {
		return nil, err
	}
	b := &envBuilder{fetch: newFetcher(objs, pod.Namespace), pod: pod, c: c, facts: facts, user: newOrderedEnv()}
	for _, from := range c.EnvFrom {
		if err := b.addFrom(ctx, from); err != nil {
			return nil, err
		}
	}
	linkValues := map[string]string{}
	for _, l := range links {
		linkValues[l.name] = l.value
	}
	lookup := func(name string) (string, bool) {
		if v, ok := b.user.values[name]; ok {
			return v, true
		}
		v, ok := linkValues[name]
		return v, ok
	}
	for i := range c.Env {
		if err := b.add(ctx, &c.Env[i], lookup); err != nil {
			return nil, err
		}
	}
	return mergeEnv(img.Env, links, b.user), nil
}

// mergeEnv lays the container's variables over the service links over the
// image's, keeping each name at the place it first appeared.
func mergeEnv(image []string, links []envVar, user *orderedEnv) []string {
	out := newOrderedEnv()
	for _, kv := range image {
		k, v, _ := strings.Cut(kv, "=")
		out.set(k, v)
	}
	for _, l := range links {
		if _, set := user.values[l.name]; !set {
			out.set(l.name, l.value)
		}
	}
	for _, k := range user.names {
		out.set(k, user.values[k])
	}
	return out.list()
}

// orderedEnv is a set of variables in the order they were first set.
type orderedEnv struct {
	names  []string
	values map[string]string
}

func newOrderedEnv() *orderedEnv { return &orderedEnv{values: map[string]string{}} }

func (e *orderedEnv) set(name, value string) {
	if _, ok := e.values[name]; !ok {
		e.names = append(e.names, name)
	}
	e.values[name] = value
}

func (e *orderedEnv) list() []string {
	out := make([]string, len(e.names))
	for i, k := range e.names {
		out[i] = k + "=" + e.values[k]
	}
	return out
}

// envBuilder collects the variables a container itself defines.
type envBuilder struct {
	fetch *fetcher
	pod   *corev1.Pod
	c     *corev1.Container
	facts PodFacts
	user  *orderedEnv
}

// addFrom adds the keys of an envFrom source, with its prefix, in key order.
func (b *envBuilder) addFrom(ctx context.Context, from corev1.EnvFromSource) error {
	data := map[string]string{}
	switch {
	case from.ConfigMapRef != nil:
		cm, err := b.fetch.configMap(ctx, from.ConfigMapRef.Name, from.ConfigMapRef.Optional)
		if err != nil || cm == nil {
			return err
		}
		data = cm.Data
	case from.SecretRef != nil:
		s, err := b.fetch.secret(ctx, from.SecretRef.Name, from.SecretRef.Optional)
		if err != nil || s == nil {
			return err
		}
		for k, v := range s.Data {
			data[k] = string(v)
		}
	}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if name := from.Prefix + k; len(validation.IsRelaxedEnvVarName(name)) == 0 {
			b.user.set(name, data[k])
		}
	}
	return nil
}

// add adds one env entry; an optional reference to something missing adds
// nothing.
func (b *envBuilder) add(ctx context.Context, e *corev1.EnvVar, lookup func(string) (string, bool)) error {
	if e.ValueFrom == nil {
		b.user.set(e.Name, expand(e.Value, lookup))
		return nil
	}
	v, ok, err := b.valueFrom(ctx, e.ValueFrom)
	if err != nil {
		return err
	}
	if ok {
		b.user.set(e.Name, v)
	}
	return nil
}

func (b *envBuilder) valueFrom(ctx context.Context, from *corev1.EnvVarSource) (string, bool, error) {
	switch {
	case from.FieldRef != nil:
		v, err := fieldValue(b.pod, b.facts, from.FieldRef.FieldPath)
		return v, err == nil, asConfigError(err)
	case from.ResourceFieldRef != nil:
		v, err := resourceValue(b.pod, b.c, from.ResourceFieldRef, b.facts.NodeAllocatable)
		return v, err == nil, asConfigError(err)
	case from.ConfigMapKeyRef != nil:
		return b.configMapKey(ctx, from.ConfigMapKeyRef)
	case from.SecretKeyRef != nil:
		return b.secretKey(ctx, from.SecretKeyRef)
	}
	return "", false, configErrorf("unsupported valueFrom source (only fieldRef, resourceFieldRef, configMapKeyRef and secretKeyRef run on the local node)")
}

func (b *envBuilder) configMapKey(ctx context.Context, ref *corev1.ConfigMapKeySelector) (string, bool, error) {
	cm, err := b.fetch.configMap(ctx, ref.Name, ref.Optional)
	if err != nil || cm == nil {
		return "", false, err
	}
	v, ok := cm.Data[ref.Key]
	if !ok && !isTrue(ref.Optional) {
		return "", false, configErrorf("couldn't find key %s in ConfigMap %s/%s", ref.Key, b.pod.Namespace, ref.Name)
	}
	return v, ok, nil
}

func (b *envBuilder) secretKey(ctx context.Context, ref *corev1.SecretKeySelector) (string, bool, error) {
	s, err := b.fetch.secret(ctx, ref.Name, ref.Optional)
	if err != nil || s == nil {
		return "", false, err
	}
	v, ok := s.Data[ref.Key]
	if !ok && !isTrue(ref.Optional) {
		return "", false, configErrorf("couldn't find key %s in Secret %s/%s", ref.Key, b.pod.Namespace, ref.Name)
	}
	return string(v), ok, nil
}

func asConfigError(err error) error {
	if err == nil {
		return nil
	}
	return &ConfigError{Reason: ReasonCreateContainerConfigError, Message: fmt.Sprint(err), Err: err}
}
