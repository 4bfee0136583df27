// Package podinputs turns a corev1.Pod into what the local node needs to start
// each of its containers as a process, the way a kubelet and a container
// runtime would: the local executable an image reference stands for, the
// argv, the environment and the host directories to bind-mount.
//
// The Kubernetes rules followed here are those of the kubelet: command and
// args replace the image's ENTRYPOINT and CMD, $(VAR) references expand
// against earlier variables, later env entries override envFrom, service link
// variables never override the container's own, and configMap, secret,
// downwardAPI and projected volumes are written with an atomic writer (a
// timestamped directory behind a "..data" symlink) so that a reader sees an
// update whole.
//
// Pods may rename what is in the directories they share with the node
// (emptyDirs, persistent volumes, shared hostPath directories) at any time,
// so the node opens each path there once, beneath a directory it holds
// open and without following symlinks out of it, and bind-mounts what it
// opened into a directory of its own (see beneath.go and binds.go): the
// containers mount exactly what was checked.
package podinputs
