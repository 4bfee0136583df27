package podinputs

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Argv is the argv a container runs, with Kubernetes' rules: command replaces
// the image's ENTRYPOINT and drops its CMD, args replaces CMD, and $(VAR) in
// command and args expands from env (the container's environment as Env
// builds it). The image's own ENTRYPOINT and CMD are not expanded.
//
// env includes the image's variables, so $(VAR) of a variable only the image
// defines expands here, where a kubelet (which never sees image variables)
// would keep it verbatim.
func Argv(img Image, c *corev1.Container, env []string) ([]string, error) {
	lookup := envLookup(env)
	expandAll := func(in []string) []string {
		out := make([]string, len(in))
		for i, s := range in {
			out[i] = expand(s, lookup)
		}
		return out
	}
	var argv []string
	switch {
	case len(c.Command) > 0:
		argv = append(expandAll(c.Command), expandAll(c.Args)...)
	case len(c.Args) > 0:
		argv = append(slices.Clone(img.Entrypoint), expandAll(c.Args)...)
	default:
		argv = append(slices.Clone(img.Entrypoint), img.Cmd...)
	}
	if len(argv) == 0 {
		return nil, &ConfigError{Reason: ReasonCreateContainerError,
			Message: "no command specified: container " + c.Name + " sets no command and image " + img.Ref + " has none"}
	}
	return argv, nil
}
