package main

import (
	"context"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// parseRef parses an image reference; insecure lets the registry be reached
// over plain HTTP (go-containerregistry already does for localhost and
// private addresses).
func parseRef(s string, insecure bool) (name.Reference, error) {
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	return name.ParseReference(s, opts...)
}

// push uploads the index and its images to ref with the credentials of the
// default keychain (`docker login`'s config.json, and its helpers).
func push(ctx context.Context, idx v1.ImageIndex, ref name.Reference) error {
	return remote.WriteIndex(ref, idx, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain))
}
