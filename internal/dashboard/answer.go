package dashboard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"golang.org/x/sync/semaphore"
)

// What a head's answer may cost the operator. A Ray head is run by a
// tenant, so its answers are hostile input: unbounded, one head answering a
// poll with megabytes of small JSON objects makes the operator decode each
// into a Go value (a 3-byte "{}" in a job list becomes a 232-byte JobInfo:
// a 6 MB answer allocated 2.5 GB, BenchmarkHostileAnswer), and with up to
// CachePollsInFlight polls at once that ends the operator's 512Mi for every
// tenant.
//
// The sizes come from Ray 2.60's own answers, measured on a real head
// (testdata holds two): a job in GET /api/jobs/ or /api/jobs/{id} is ~525
// bytes plus its entrypoint, runtime_env and metadata, which the RayJob
// sets (an object of at most ~1.5 MiB in etcd); in GET
// /api/serve/applications/ an application is ~550 bytes, a deployment ~950,
// each replica ~450, plus the applied config (serveConfigV2, again at most
// ~1.5 MiB) and ~460 per node running a Serve proxy. At the scale of
// docs/dev/benchmarks.md a cluster listing 10,000 jobs answers 5.0 MB, and
// a RayService of 1,000 deployments with 4,000 replicas on 3,400 nodes (the
// largest RayCluster there) 4.1 MB before its config
// (TestRealAnswersAtScaleAreRead). Ray's answers hold one JSON object or
// array per 120 to 250 bytes, and decoding them allocates ~4.5 times their
// size.
const (
	// MaxAnswerBytes bounds an answer: 10,000 listed jobs, or the largest
	// RayService above with its config, with headroom. A longer answer is
	// an ErrAnswerTooLarge, its excess never read. It also bounds a job's
	// logs (GetJobLog, which no controller calls; 64 MiB before).
	MaxAnswerBytes = 8 << 20
	// minBytesPerContainer is the fewest bytes per JSON object or array an
	// answer may have, half of what Ray's have: it bounds what decoding
	// may cost per byte read whatever the answer's shape, ~19 times its
	// size allocated (BenchmarkHostileAnswer, job-list-at-the-limit).
	minBytesPerContainer = 64
	// containerAllowance is how many objects and arrays any answer may
	// hold whatever its size.
	containerAllowance = 64
	// freeAnswerBytes is the size up to which an answer is read and
	// decoded without the answer budget: Ray's answers about one job
	// (typically under 2 KB), so that the polls of ordinary RayJobs never
	// wait on heads that answer megabytes.
	freeAnswerBytes = 8 << 10
	// answerBudgetBytes bounds the buffers of all answers above
	// freeAnswerBytes being read and decoded at once, by every client in
	// the process (room for one answer of MaxAnswerBytes and others). With
	// CachePollsInFlight free answers it bounds the answers held at once to
	// 14 MiB, and what decoding them allocates to ~19 times that at worst
	// (~4.5 times for Ray's own answers): against 64 MiB per answer, 256 at
	// once, before.
	answerBudgetBytes = MaxAnswerBytes + MaxAnswerBytes/2
)

// maxHeaderBytes bounds the headers of an answer on a direct connection
// (Ray's are ~150 bytes), where net/http's default allows 10 MiB. Through
// the API server's proxy (--use-kubernetes-proxy) client-go's transport
// keeps that default, which cannot be set from a rest.Config.
const maxHeaderBytes = 64 << 10

// directTransport is the transport of every client this package makes for
// a direct connection to a head: http.DefaultTransport's settings, with
// answer headers bounded by maxHeaderBytes. One for all, so that they share
// connections.
var directTransport = func() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxResponseHeaderBytes = maxHeaderBytes
	return t
}()

// ErrAnswerTooLarge matches an answer refused for its size or shape: longer
// than MaxAnswerBytes, denser in JSON objects and arrays than Ray's answers
// ever are, or one that found no room in the answer budget in time.
var ErrAnswerTooLarge = errors.New("answer too large")

// answerBudget is the process-wide budget of answerBudgetBytes.
var answerBudget = semaphore.NewWeighted(answerBudgetBytes)

// readBody is a read answer; release gives its share of the answer budget
// back once it is decoded.
type readBody struct {
	body    []byte
	release func()
}

// readAnswer reads resp's body, at most limit bytes (limit must not exceed
// answerBudgetBytes). Past freeAnswerBytes, the buffer it reads into holds
// a share of answerBudget as large as itself: the answer's whole length at
// once when its Content-Length gives it (as Ray's do), else as it grows.
// Each share is waited for at most wait; an answer that finds no room is
// an ErrAnswerTooLarge.
func readAnswer(ctx context.Context, resp *http.Response, limit int64, wait time.Duration) (readBody, error) {
	if resp.ContentLength > limit {
		return readBody{release: func() {}}, tooLarge(limit)
	}
	size := limit
	if resp.ContentLength >= 0 {
		size = resp.ContentLength
	}
	waitCtx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var held int64
	release := func() { answerBudget.Release(held) }
	// grow doubles buf's capacity, up to size; past freeAnswerBytes it
	// takes the answer's whole size when it is known.
	grow := func(buf []byte) ([]byte, error) {
		capacity := min(max(2*int64(cap(buf)), 512), size)
		if capacity > freeAnswerBytes {
			if resp.ContentLength >= 0 {
				capacity = size
			}
			if err := answerBudget.Acquire(waitCtx, capacity-held); err != nil {
				return buf, fmt.Errorf("%w: no room within %s to read it while other large answers are read (%d bytes at once at most): %w",
					ErrAnswerTooLarge, wait, answerBudgetBytes, err)
			}
			held = capacity
		}
		grown := make([]byte, len(buf), capacity)
		copy(grown, buf)
		return grown, nil
	}
	buf, err := readInto(resp.Body, size, grow)
	if err == nil && int64(len(buf)) == size {
		// Anything past size is an answer longer than limit (or than its
		// Content-Length, which the transport refuses).
		var probe [1]byte
		if n, _ := io.ReadFull(resp.Body, probe[:]); n > 0 {
			err = tooLarge(limit)
		}
	}
	if err != nil {
		release()
		return readBody{release: func() {}}, err
	}
	return readBody{body: buf, release: release}, nil
}

// readInto reads r until it ends or size bytes are read, into a buffer
// that grow enlarges when it is full.
func readInto(r io.Reader, size int64, grow func([]byte) ([]byte, error)) ([]byte, error) {
	var buf []byte
	for int64(len(buf)) < size {
		if len(buf) == cap(buf) {
			var err error
			if buf, err = grow(buf); err != nil {
				return nil, err
			}
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// tooLarge is the error of an answer longer than limit.
func tooLarge(limit int64) error {
	return fmt.Errorf("%w: more than %d bytes", ErrAnswerTooLarge, limit)
}

// checkShape refuses a JSON answer that holds more objects and arrays than
// its size allows (containerAllowance plus one per minBytesPerContainer):
// decoding each costs up to a few hundred bytes however small it is
// written. The scan allocates nothing.
func checkShape(body []byte) error {
	containers := jsonContainers(body)
	if allowed := containerAllowance + len(body)/minBytesPerContainer; containers > allowed {
		return fmt.Errorf("%w to decode: %d JSON objects and arrays in %d bytes, more than one per %d bytes (Ray's hold one per 120 to 250)",
			ErrAnswerTooLarge, containers, len(body), minBytesPerContainer)
	}
	return nil
}

// jsonContainers counts the objects and arrays of a JSON text: the
// brackets and braces that open outside strings.
func jsonContainers(b []byte) int {
	n := 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case escaped:
			escaped = false
		case inString:
			switch c {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			n++
		}
	}
	return n
}
