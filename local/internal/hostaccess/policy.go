// Package hostaccess is the local node's host-access policy: which pod
// settings reach past the pod's sandbox to the host, and whether the node
// admits a pod that uses them.
//
// The node runs every pod's containers in a user namespace, so that root in
// a container is an unprivileged user of the host. Settings that need root
// on the host (a privileged container; the host's network, PID or IPC
// namespace; spec.hostUsers: true) are refused unless the node allows host
// privileges, and a pod admitted with them runs without a user namespace.
// A hostPath volume is refused unless its path, once its symlinks are
// followed, lies under a directory the node shares; it still runs in a user
// namespace. A persistent volume is mounted only when its directory lies
// under the node's volume directory (where the node's provisioner creates
// them) or under a shared directory.
package hostaccess

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Reasons of a refusal: the pod's status.reason and the reason of the
// Warning event on it.
const (
	// ReasonHostPrivileges refuses a pod that needs root on the host.
	ReasonHostPrivileges = "HostPrivilegesForbidden"
	// ReasonHostPath refuses a hostPath volume outside the shared
	// directories.
	ReasonHostPath = "HostPathForbidden"
)

// Names of the ray-local flags that lift the refusals; messages name them.
const (
	// FlagAllowHostPrivileges admits pods that need root on the host.
	FlagAllowHostPrivileges = "allow-host-privileges"
	// FlagSharedHostDirs lists the directories hostPath volumes may name.
	FlagSharedHostDirs = "shared-host-dirs"
)

// Policy is what a node allows beyond a user-namespaced sandbox. The zero
// Policy allows nothing: no host privileges and no shared directory.
type Policy struct {
	allowHostPrivileges bool
	sharedDirs          []string // absolute, symlinks resolved
	volumeDir           string   // the provisioner's directory; "" for none
}

// NewPolicy returns the policy that admits pods needing root on the host
// when allowHostPrivileges, and hostPath volumes under sharedDirs, which
// must be absolute paths of existing directories (their symlinks are
// resolved here, once).
func NewPolicy(allowHostPrivileges bool, sharedDirs []string) (Policy, error) {
	p := Policy{allowHostPrivileges: allowHostPrivileges}
	for _, d := range sharedDirs {
		resolved, err := sharedDir(d)
		if err != nil {
			return Policy{}, err
		}
		p.sharedDirs = append(p.sharedDirs, resolved)
	}
	return p, nil
}

// sharedDir checks one shared directory and resolves its symlinks.
func sharedDir(d string) (string, error) {
	if !filepath.IsAbs(d) {
		return "", fmt.Errorf("shared directory %q: not an absolute path", d)
	}
	resolved, err := filepath.EvalSymlinks(d)
	if os.IsNotExist(err) {
		return "", fmt.Errorf("shared directory %s: does not exist", d)
	}
	if err != nil {
		return "", fmt.Errorf("shared directory %s: %w", d, err)
	}
	info, err := os.Stat(resolved)
	if err != nil {
		return "", fmt.Errorf("shared directory %s: %w", d, err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("shared directory %s: not a directory", d)
	}
	return resolved, nil
}

// Verdict is the node's answer for one pod.
type Verdict struct {
	// Reason and Message say why the node refuses the pod; Reason is empty
	// when it admits it.
	Reason, Message string
	// HostUsers is true for an admitted pod that needs root on the host:
	// its sandbox runs without a user namespace.
	HostUsers bool
}

// Admitted tells whether the node runs the pod.
func (v Verdict) Admitted() bool { return v.Reason == "" }

// refuse records one refusal; the first one gives the reason, and the
// message lists them all so that one look at the pod shows what to change.
func (v *Verdict) refuse(reason, message string) {
	if v.Reason == "" {
		v.Reason, v.Message = reason, message
		return
	}
	v.Message += "; " + message
}

// Admit says whether the node runs pod, and how.
func (p Policy) Admit(pod *corev1.Pod) Verdict {
	var v Verdict
	settings := hostRootSettings(pod)
	if len(settings) > 0 && !p.allowHostPrivileges {
		v.refuse(ReasonHostPrivileges, fmt.Sprintf("the pod needs root on the host: %s; the node runs such pods only when started with --%s",
			strings.Join(settings, ", "), FlagAllowHostPrivileges))
	}
	for _, vol := range pod.Spec.Volumes {
		if vol.HostPath == nil {
			continue
		}
		if _, msg := p.HostPath(vol.Name, vol.HostPath.Path); msg != "" {
			v.refuse(ReasonHostPath, msg)
		}
	}
	if v.Admitted() {
		v.HostUsers = len(settings) > 0
	}
	return v
}
