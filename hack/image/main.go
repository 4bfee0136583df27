// Command image builds the operator's OCI image without a container engine
// (go-containerregistry as a library), and pushes it.
//
//	image build -package ./cmd/ray-operator -ldflags ... -image REF -layout DIR -tarball FILE
//	image push -layout DIR [-insecure] REF
//
// build prints a line per platform and, last, the index digest; push
// prints the pushed reference with its digest.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: image build|push [flags]")
	}
	switch args[0] {
	case "build":
		return runBuild(ctx, args[1:], out)
	case "push":
		return runPush(ctx, args[1:], out)
	}
	return fmt.Errorf("unknown command %q (build, push)", args[0])
}

type buildFlags struct {
	opts                    Options
	epoch                   int64
	platforms, links        string
	image, layoutDir        string
	tarball, tarballPlatorm string
}

func parseBuildFlags(args []string) (*buildFlags, error) {
	f := &buildFlags{}
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	fs.StringVar(&f.opts.Dir, "dir", ".", "module directory go build runs in")
	fs.StringVar(&f.opts.Package, "package", "./cmd/ray-operator", "main package to build")
	fs.StringVar(&f.opts.LDFlags, "ldflags", "", "go build -ldflags (the version stamp)")
	fs.StringVar(&f.opts.Version, "version", "", "label "+LabelVersion)
	fs.StringVar(&f.opts.Revision, "revision", "", "label "+LabelRevision)
	fs.StringVar(&f.opts.Source, "source", "", "label "+LabelSource)
	fs.StringVar(&f.opts.BinaryPath, "binary-path", "/ray-operator", "path of the binary in the image (the entrypoint)")
	fs.StringVar(&f.links, "links", "", "comma-separated further paths of the binary (symlinks)")
	fs.Int64Var(&f.epoch, "source-date-epoch", 0, "seconds since 1970 of every file and of the config (the commit's time)")
	fs.StringVar(&f.platforms, "platforms", "linux/amd64,linux/arm64", "comma-separated platforms of the index")
	fs.StringVar(&f.image, "image", "", "the image's name (the layout's and the tarball's tag)")
	fs.StringVar(&f.layoutDir, "layout", "", "OCI layout directory to write (replaced)")
	fs.StringVar(&f.tarball, "tarball", "", "docker load tarball to write (optional)")
	fs.StringVar(&f.tarballPlatorm, "tarball-platform", "linux/amd64", "the platform whose image the tarball holds")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if f.image == "" || f.layoutDir == "" {
		return nil, fmt.Errorf("build: -image and -layout are required")
	}
	ps, err := parsePlatforms(f.platforms)
	if err != nil {
		return nil, err
	}
	f.opts.Platforms = ps
	f.opts.Created = time.Unix(f.epoch, 0).UTC()
	if f.links != "" {
		f.opts.Links = strings.Split(f.links, ",")
	}
	return f, nil
}

func parsePlatforms(s string) ([]v1.Platform, error) {
	var ps []v1.Platform
	for _, one := range strings.Split(s, ",") {
		p, err := v1.ParsePlatform(one)
		if err != nil {
			return nil, err
		}
		ps = append(ps, *p)
	}
	return ps, nil
}

func runBuild(ctx context.Context, args []string, out io.Writer) error {
	f, err := parseBuildFlags(args)
	if err != nil {
		return err
	}
	ref, err := parseRef(f.image, false)
	if err != nil {
		return err
	}
	idx, err := Build(ctx, f.opts)
	if err != nil {
		return err
	}
	if err := writeLayout(f.layoutDir, idx, ref); err != nil {
		return err
	}
	if f.tarball != "" {
		p, err := v1.ParsePlatform(f.tarballPlatorm)
		if err != nil {
			return err
		}
		if err := writeTarball(f.tarball, idx, *p, ref); err != nil {
			return err
		}
	}
	return summarize(out, idx)
}

func runPush(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("push", flag.ContinueOnError)
	layoutDir := fs.String("layout", "", "OCI layout directory `image build` wrote")
	insecure := fs.Bool("insecure", false, "reach the registry over plain HTTP")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 || *layoutDir == "" {
		return fmt.Errorf("usage: image push -layout DIR [-insecure] REGISTRY/REPOSITORY:TAG")
	}
	ref, err := parseRef(fs.Arg(0), *insecure)
	if err != nil {
		return err
	}
	idx, err := readLayout(*layoutDir)
	if err != nil {
		return err
	}
	if err := push(ctx, idx, ref); err != nil {
		return err
	}
	d, err := idx.Digest()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%s@%s\n", ref.Context(), d)
	return err
}
