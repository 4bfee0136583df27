package podinputs

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
)

// defaultMode is the mode of volume files when the pod sets none (0644, as
// the API server defaults defaultMode).
const defaultMode int32 = 0o644

// contents builds the files of configMap, secret, downwardAPI and projected
// volumes from the API objects of one pass.
type contents struct {
	fetch  *fetcher
	pod    *corev1.Pod
	facts  PodFacts
	tokens *tokenSource
}

// files returns the files of an API-data volume; ok is false for other kinds.
func (b *contents) files(ctx context.Context, vol *corev1.Volume) (out payload, ok bool, err error) {
	out = payload{}
	src := vol.VolumeSource
	switch {
	case src.ConfigMap != nil:
		s := src.ConfigMap
		err = b.configMap(ctx, s.Name, s.Items, s.Optional, modeOr(s.DefaultMode, defaultMode), out)
	case src.Secret != nil:
		s := src.Secret
		err = b.secret(ctx, s.SecretName, s.Items, s.Optional, modeOr(s.DefaultMode, defaultMode), out)
	case src.DownwardAPI != nil:
		err = b.downward(src.DownwardAPI.Items, modeOr(src.DownwardAPI.DefaultMode, defaultMode), out)
	case src.Projected != nil:
		err = b.projected(ctx, vol.Name, src.Projected, out)
	default:
		return nil, false, nil
	}
	return out, true, err
}

func (b *contents) projected(ctx context.Context, volume string, p *corev1.ProjectedVolumeSource, out payload) error {
	mode := modeOr(p.DefaultMode, defaultMode)
	for i, s := range p.Sources {
		var err error
		switch {
		case s.ConfigMap != nil:
			err = b.configMap(ctx, s.ConfigMap.Name, s.ConfigMap.Items, s.ConfigMap.Optional, mode, out)
		case s.Secret != nil:
			err = b.secret(ctx, s.Secret.Name, s.Secret.Items, s.Secret.Optional, mode, out)
		case s.DownwardAPI != nil:
			err = b.downward(s.DownwardAPI.Items, mode, out)
		case s.ServiceAccountToken != nil:
			err = b.token(ctx, fmt.Sprintf("%s/%d", volume, i), s.ServiceAccountToken, mode, out)
		default:
			err = configErrorf("projected volume source %d is not supported on the local node (only configMap, secret, downwardAPI and serviceAccountToken)", i)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (b *contents) configMap(ctx context.Context, name string, items []corev1.KeyToPath, optional *bool, mode int32, out payload) error {
	cm, err := b.fetch.configMap(ctx, name, optional)
	if err != nil || cm == nil {
		return err
	}
	data := make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return keyFiles(data, items, optional, mode, out, "configmap references non-existent config key: %s")
}

func (b *contents) secret(ctx context.Context, name string, items []corev1.KeyToPath, optional *bool, mode int32, out payload) error {
	s, err := b.fetch.secret(ctx, name, optional)
	if err != nil || s == nil {
		return err
	}
	return keyFiles(s.Data, items, optional, mode, out, "references non-existent secret key: %s")
}

// keyFiles adds every key of data (no items) or the listed ones at their
// paths; a listed key that is missing is an error unless optional.
func keyFiles(data map[string][]byte, items []corev1.KeyToPath, optional *bool, mode int32, out payload, missingKey string) error {
	if len(items) == 0 {
		for k, v := range data {
			out[k] = file{data: v, mode: fileMode(mode)}
		}
		return nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			if isTrue(optional) {
				continue
			}
			return configErrorf(missingKey, it.Key)
		}
		out[it.Path] = file{data: v, mode: fileMode(modeOr(it.Mode, mode))}
	}
	return nil
}

func (b *contents) downward(items []corev1.DownwardAPIVolumeFile, mode int32, out payload) error {
	for _, it := range items {
		var v string
		var err error
		switch {
		case it.FieldRef != nil:
			v, err = fieldValue(b.pod, b.facts, it.FieldRef.FieldPath)
		case it.ResourceFieldRef != nil && it.ResourceFieldRef.ContainerName == "":
			err = fmt.Errorf("resourceFieldRef of %s: containerName is required in volumes", it.Path)
		case it.ResourceFieldRef != nil:
			v, err = resourceValue(b.pod, nil, it.ResourceFieldRef, b.facts.NodeAllocatable)
		}
		if err != nil {
			return asConfigError(err)
		}
		out[it.Path] = file{data: []byte(v), mode: fileMode(modeOr(it.Mode, mode))}
	}
	return nil
}

func modeOr(m *int32, def int32) int32 {
	if m != nil {
		return *m
	}
	return def
}

func fileMode(m int32) os.FileMode { return os.FileMode(uint32(m) & 0o777) }
