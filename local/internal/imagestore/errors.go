package imagestore

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// Cause says why a pull failed, in the words a pod's event shows.
type Cause string

// The causes of a failed pull.
const (
	// CauseNotFound: the registry serves no such repository, tag or digest.
	CauseNotFound Cause = "not found"
	// CauseUnauthorized: the registry refused the credentials (or their
	// absence).
	CauseUnauthorized Cause = "unauthorized"
	// CauseUnreachable: no connection to the registry.
	CauseUnreachable Cause = "registry unreachable"
	// CauseDigestMismatch: what the registry sent does not have the digest
	// that names it.
	CauseDigestMismatch Cause = "digest mismatch"
	// CauseCorruptLayer: a layer's content cannot be read or unpacked.
	CauseCorruptLayer Cause = "corrupt layer"
	// CauseNoPlatform: the image has no manifest for the node's platform.
	CauseNoPlatform Cause = "no matching platform"
	// CauseInvalidReference: the reference does not parse.
	CauseInvalidReference Cause = "invalid reference"
	// CauseRegistry: any other failure the registry reported.
	CauseRegistry Cause = "registry error"
	// CauseNotPresent: the image is not in the store and the caller did not
	// allow a pull (imagePullPolicy Never).
	CauseNotPresent Cause = "not present"
	// CauseStore: the store's own disk failed.
	CauseStore Cause = "store error"
)

// PullError is a failed pull: the reference, why, and the underlying error.
type PullError struct {
	// Ref is the reference as given.
	Ref string
	// Cause says why the pull failed.
	Cause Cause
	// Err is the underlying error.
	Err error
}

func (e *PullError) Error() string {
	return fmt.Sprintf("pull %q: %s: %v", e.Ref, e.Cause, e.Err)
}

func (e *PullError) Unwrap() error { return e.Err }

// errDigest marks content whose digest is not the one that names it.
var errDigest = errors.New("digest mismatch")

// errCorrupt marks a layer whose content is not a valid (compressed) tar.
var errCorrupt = errors.New("corrupt layer")

// classify turns an error from go-containerregistry or the unpack into a
// PullError for ref.
func classify(ref string, err error) *PullError {
	var pe *PullError
	if errors.As(err, &pe) {
		if pe.Ref == "" {
			return &PullError{Ref: ref, Cause: pe.Cause, Err: pe.Err}
		}
		return pe
	}
	return &PullError{Ref: ref, Cause: causeOf(err), Err: err}
}

func causeOf(err error) Cause {
	var terr *transport.Error
	if errors.As(err, &terr) {
		return transportCause(terr)
	}
	// Not net.Error: syscall.Errno implements it too.
	var oerr *net.OpError
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, errDigest):
		return CauseDigestMismatch
	case errors.Is(err, errCorrupt):
		return CauseCorruptLayer
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT), errors.Is(err, syscall.EIO), errors.Is(err, syscall.EROFS):
		return CauseStore
	case errors.As(err, &oerr), errors.As(err, &dnsErr):
		return CauseUnreachable
	}
	return CauseRegistry
}

func transportCause(terr *transport.Error) Cause {
	for _, d := range terr.Errors {
		switch d.Code {
		case transport.ManifestUnknownErrorCode, transport.NameUnknownErrorCode, transport.BlobUnknownErrorCode:
			return CauseNotFound
		case transport.UnauthorizedErrorCode, transport.DeniedErrorCode:
			return CauseUnauthorized
		}
	}
	switch terr.StatusCode {
	case http.StatusNotFound:
		return CauseNotFound
	case http.StatusUnauthorized, http.StatusForbidden:
		return CauseUnauthorized
	}
	return CauseRegistry
}
