package node

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	corev1 "k8s.io/api/core/v1"

	"github.com/ray-operator/ray-operator/local/internal/imagestore"
	"github.com/ray-operator/ray-operator/local/internal/podinputs"
	"github.com/ray-operator/ray-operator/local/internal/podworker"
	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

// localInputs is podworker.Inputs on package podinputs: images from an
// image table, or from registries through the image store for references
// the table has no rule for; everything else from the API.
type localInputs struct {
	images podinputs.ImageTable
	// store holds the registry images; nil: only the table's images run.
	store *imagestore.Store
	objs  podinputs.Objects
}

var _ podworker.Inputs = localInputs{}

// Image implements podworker.Inputs. A local image's imageID names the
// reference (it has no digest); a registry image's is its repository at
// its manifest digest, as a container runtime reports it.
//
// A reference no rule maps is a registry image. So is one a rule maps but
// that names a registry of its own (not Docker Hub, which the mapped
// images stand for): its registry is asked first, and the rule's image
// runs when the registry does not serve it (Offline).
func (in localInputs) Image(ref string) (podworker.Image, error) {
	img, err := in.images.Resolve(ref)
	var noLocal *podinputs.NoLocalImageError
	switch {
	case in.store != nil && errors.As(err, &noLocal):
		return in.storedImage(ref, nil)
	case err != nil:
		return podworker.Image{}, err
	case in.store != nil && explicitRegistry(ref):
		return in.storedImage(ref, &img)
	}
	return localImage(img), nil
}

func localImage(img podinputs.Image) podworker.Image {
	return podworker.Image{Image: img, ID: "local://" + img.Ref}
}

// explicitRegistry says whether ref names a registry other than Docker
// Hub.
func explicitRegistry(ref string) bool {
	r, err := name.ParseReference(ref)
	if err != nil {
		return false
	}
	first, _, _ := strings.Cut(ref, "/")
	explicit := strings.ContainsAny(first, ".:") || first == "localhost"
	return explicit && r.Context().RegistryStr() != name.DefaultRegistry
}

// storedImage is the registry image ref, with its root when the store
// holds it, and offline, the local image of its rule, if any.
func (in localInputs) storedImage(ref string, offline *podinputs.Image) (podworker.Image, error) {
	stored, ok, err := in.store.Present(ref)
	if err != nil {
		return podworker.Image{}, err
	}
	if !ok {
		return podworker.Image{Image: podinputs.Image{Ref: ref, Local: "not pulled yet", Registry: true, Offline: offline}}, nil
	}
	return registryImage(ref, stored)
}

func registryImage(ref string, stored imagestore.Image) (podworker.Image, error) {
	img, err := podinputs.RegistryImage(ref, stored)
	if err != nil {
		return podworker.Image{}, err
	}
	id := stored.Digest.String()
	if r, err := name.ParseReference(ref); err == nil {
		id = r.Context().Name() + "@" + id
	}
	return podworker.Image{Image: img, ID: id}, nil
}

// Pull implements podworker.Inputs: a Ray release's install, or a
// registry image's pull with the pod's imagePullSecrets.
func (in localInputs) Pull(ctx context.Context, pod *corev1.Pod, img podworker.Image) (podworker.Image, error) {
	if img.Registry {
		keychain, err := in.pullSecrets(ctx, pod)
		if err != nil {
			return podworker.Image{}, err
		}
		stored, err := in.store.Pull(ctx, img.Ref, keychain)
		var pe *imagestore.PullError
		if img.Offline != nil && errors.As(err, &pe) && (pe.Cause == imagestore.CauseNotFound || pe.Cause == imagestore.CauseUnreachable) {
			return in.Pull(ctx, pod, localImage(*img.Offline))
		}
		if err != nil {
			return podworker.Image{}, err
		}
		return registryImage(img.Ref, stored)
	}
	pulled, err := in.images.Pull(ctx, img.Image)
	if err != nil {
		return podworker.Image{}, err
	}
	return localImage(pulled), nil
}

// pullSecrets are the credentials of pod's imagePullSecrets. As a kubelet,
// a secret that is missing or not a docker config is skipped (the pull may
// need none); one the API cannot be asked for fails the pull.
func (in localInputs) pullSecrets(ctx context.Context, pod *corev1.Pod) (imagestore.DockerConfigKeychain, error) {
	var configs [][]byte
	for _, ref := range pod.Spec.ImagePullSecrets {
		s, err := in.objs.Secret(ctx, pod.Namespace, ref.Name)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return imagestore.DockerConfigKeychain{}, fmt.Errorf("image pull secret %s/%s: %w", pod.Namespace, ref.Name, err)
		}
		switch s.Type {
		case corev1.SecretTypeDockerConfigJson:
			configs = append(configs, s.Data[corev1.DockerConfigJsonKey])
		case corev1.SecretTypeDockercfg:
			configs = append(configs, s.Data[corev1.DockerConfigKey])
		}
	}
	return imagestore.ParseDockerConfigs(configs...)
}

// Volumes implements podworker.Inputs.
func (in localInputs) Volumes(ctx context.Context, pod *corev1.Pod, dir string, facts podinputs.PodFacts) (podworker.Volumes, error) {
	vols, err := podinputs.Volumes(ctx, in.objs, pod, dir, facts)
	if err != nil {
		return nil, err
	}
	return podVolumes{vols: vols, objs: in.objs}, nil
}

// Container implements podworker.Inputs.
func (in localInputs) Container(ctx context.Context, pod *corev1.Pod, c *corev1.Container, img podworker.Image, vols podworker.Volumes, facts podinputs.PodFacts) (podworker.ContainerInputs, error) {
	env, err := podinputs.Env(ctx, in.objs, pod, c, img.Image, facts)
	if err != nil {
		return podworker.ContainerInputs{}, err
	}
	args, err := podinputs.Argv(img.Image, c, env)
	if err != nil {
		return podworker.ContainerInputs{}, err
	}
	mounts, err := vols.Mounts(c, env)
	if err != nil {
		return podworker.ContainerInputs{}, err
	}
	return podworker.ContainerInputs{Args: args, Env: env, Mounts: mounts}, nil
}

// podVolumes is podworker.Volumes on *podinputs.PodVolumes.
type podVolumes struct {
	vols *podinputs.PodVolumes
	objs podinputs.Objects
}

// Mounts implements podworker.Volumes.
func (v podVolumes) Mounts(c *corev1.Container, env []string) ([]sandbox.Mount, error) {
	mounts, err := podinputs.ExpandedMounts(c, v.vols, env)
	if err != nil {
		return nil, err
	}
	out := make([]sandbox.Mount, 0, len(mounts))
	for _, m := range mounts {
		out = append(out, sandbox.Mount(m)) // the same fields: a conversion, not a copy
	}
	return out, nil
}

// Refresh implements podworker.Volumes.
func (v podVolumes) Refresh(ctx context.Context, pod *corev1.Pod, facts podinputs.PodFacts) error {
	return v.vols.Refresh(ctx, v.objs, pod, facts)
}

// Release implements podworker.Volumes.
func (v podVolumes) Release() error { return v.vols.Release() }
