package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ray-operator/ray-operator/internal/controlplane"
	localcluster "github.com/ray-operator/ray-operator/local/internal/cluster"
	"github.com/ray-operator/ray-operator/local/internal/imagestore"
)

// loadCommand is the first argument of `ray-local load ...`.
const loadCommand = "load"

const loadUsage = `usage: ray-local load image-archive FILE [--name REF]... [--state-dir DIR]

Loads the images of FILE (a "docker save" tarball, or an OCI layout as a
directory or a tar) into the local node's image store, as kind load
image-archive does for kind: pods run them by the archive's names (or the
--name references) with imagePullPolicy IfNotPresent or Never; Always still
asks the image's registry.`

// names is a repeatable flag.
type names []string

func (n *names) String() string     { return strings.Join(*n, ",") }
func (n *names) Set(v string) error { *n = append(*n, v); return nil }

// loadRequest is `ray-local load image-archive` as given.
type loadRequest struct {
	archive  string
	names    names
	stateDir string
}

// parseLoad reads `image-archive FILE [flags]`, flags before or after FILE.
func parseLoad(args []string, stderr io.Writer) (loadRequest, error) {
	var req loadRequest
	if len(args) == 0 || args[0] != "image-archive" {
		return req, fmt.Errorf("want `load image-archive FILE`\n%s", loadUsage)
	}
	fs := flag.NewFlagSet("ray-local load image-archive", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, loadUsage); fs.PrintDefaults() }
	fs.Var(&req.names, "name", "A reference (repository:tag) to load the archive's only image under, instead of the names the archive gives; repeatable.")
	fs.StringVar(&req.stateDir, "state-dir", "", "The local cluster's state directory (default <repo>/.cache/local, as ray-local's).")
	var files []string
	for rest := args[1:]; ; {
		if err := fs.Parse(rest); err != nil {
			return req, err
		}
		if fs.NArg() == 0 {
			break
		}
		files, rest = append(files, fs.Arg(0)), fs.Args()[1:]
	}
	if len(files) != 1 {
		return req, fmt.Errorf("want one archive, got %d\n%s", len(files), loadUsage)
	}
	req.archive = files[0]
	return req, nil
}

// runLoad loads the archive of `ray-local load image-archive` into the
// local node's image store, beside the node if it runs.
func runLoad(args []string, stdout, stderr io.Writer) error {
	req, err := parseLoad(args, stderr)
	if err != nil {
		return err
	}
	if req.stateDir == "" {
		if req.stateDir, err = defaultStateDir(); err != nil {
			return err
		}
	}
	dir := localcluster.ImageStoreDir(req.stateDir)
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("no local node's image store at %s (%w): start the local cluster once with `make run`, or give its --state-dir", dir, err)
	}
	store, err := imagestore.Open(dir, imagestore.Options{Guest: true})
	if err != nil {
		return err
	}
	began := time.Now()
	loaded, err := store.Load(req.archive, req.names)
	if err != nil {
		return err
	}
	for _, img := range loaded {
		fmt.Fprintf(stdout, "loaded %s (%s, %d MB unpacked)\n", img.Ref, img.Digest, img.Size>>20)
	}
	fmt.Fprintf(stdout, "%d image(s) loaded in %v; pods run them with imagePullPolicy IfNotPresent or Never\n", len(loaded), time.Since(began).Round(time.Millisecond))
	return nil
}

// defaultStateDir is ray-local's default --state-dir.
func defaultStateDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root, err := controlplane.ModuleRoot(wd)
	if err != nil {
		return "", errors.Join(err, errors.New("run ray-local load from the repository, or give --state-dir"))
	}
	return filepath.Join(root, ".cache", "local"), nil
}
