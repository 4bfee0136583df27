package node

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/ray-operator/ray-operator/local/internal/podinputs"
	"github.com/ray-operator/ray-operator/local/internal/podworker"
	"github.com/ray-operator/ray-operator/local/internal/sandbox"
)

// localInputs is podworker.Inputs on package podinputs: images from an
// image table, everything else from the API.
type localInputs struct {
	images podinputs.ImageTable
	objs   podinputs.Objects
}

var _ podworker.Inputs = localInputs{}

// Image implements podworker.Inputs; the imageID names the reference, as
// the local node has no image digests.
func (in localInputs) Image(ref string) (podworker.Image, error) {
	img, err := in.images.Resolve(ref)
	if err != nil {
		return podworker.Image{}, err
	}
	return podworker.Image{Image: img, ID: "local://" + ref}, nil
}

// Pull implements podworker.Inputs.
func (in localInputs) Pull(ctx context.Context, img podworker.Image) (podworker.Image, error) {
	pulled, err := in.images.Pull(ctx, img.Image)
	if err != nil {
		return podworker.Image{}, err
	}
	img.Image = pulled
	return img, nil
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
