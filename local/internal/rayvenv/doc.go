// Package rayvenv is the Ray virtualenv of one Ray release on the local
// node: which release and Python a Ray image tag names (tag.go), what an
// installed virtualenv runs (venv.go), and the installer that builds the
// virtualenv of a release on first use, hack/ray-venv.sh (install.go). The
// node's image table (podinputs) maps a Ray image to the virtualenv of its
// tag's release; the pod worker reports the install as the image pull.
package rayvenv
