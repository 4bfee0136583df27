package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
)

// profiler fetches pprof profiles from the operator's --pprof-bind-address
// into -pprof-dir, in files named after the run: <kind>-<N>-<label>-<profile>.pprof.
type profiler struct {
	addr, dir, prefix string
	cpu, trace        chan error // the CPU profile's and the trace's outcomes
	files             []string
}

func newProfiler(addr, dir, kind string, n int, label string) *profiler {
	return &profiler{addr: addr, dir: dir, prefix: fmt.Sprintf("%s-%d-%s", kind, n, slug(label))}
}

// startCPU fetches a CPU profile over the next seconds in the background;
// waitStarted waits for it.
func (p *profiler) startCPU(ctx context.Context, seconds int) {
	p.cpu = make(chan error, 1)
	go func() {
		p.cpu <- p.fetch(ctx, "profile?seconds="+strconv.Itoa(seconds), "cpu")
	}()
}

// startTrace fetches a runtime execution trace over the next seconds in the
// background (read it with go tool trace; -pprof=sched gives the time
// goroutines waited to run); waitStarted waits for it.
func (p *profiler) startTrace(ctx context.Context, seconds int) {
	p.trace = make(chan error, 1)
	go func() {
		p.trace <- p.fetchAs(ctx, "trace?seconds="+strconv.Itoa(seconds), "trace", "trace.out")
	}()
}

// waitStarted waits for the CPU profile and the trace that were started.
func (p *profiler) waitStarted(ctx context.Context) error {
	return errors.Join(waitFetch(ctx, p.cpu), waitFetch(ctx, p.trace))
}

// waitFetch waits for a background fetch, if one was started.
func waitFetch(ctx context.Context, done chan error) error {
	if done == nil {
		return nil
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// finish waits for the CPU profile and the trace and fetches the heap and
// allocs profiles; call it before the operator stops.
func (p *profiler) finish(ctx context.Context) ([]string, error) {
	err := p.waitStarted(ctx)
	for _, name := range []string{"heap", "allocs"} {
		err = errors.Join(err, p.fetch(ctx, name, name))
	}
	return p.files, err
}

// fetch saves /debug/pprof/<path> as <prefix>-<name>.pprof.
func (p *profiler) fetch(ctx context.Context, path, name string) error {
	return p.fetchAs(ctx, path, name, name+".pprof")
}

// fetchAs saves /debug/pprof/<path> as <prefix>-<suffix>.
func (p *profiler) fetchAs(ctx context.Context, path, name, suffix string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.addr+"/debug/pprof/"+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("fetching the %s profile: %w", name, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fetching the %s profile: %s", name, resp.Status)
	}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return err
	}
	file := filepath.Join(p.dir, p.prefix+"-"+suffix)
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, resp.Body)
	if err = errors.Join(err, f.Close()); err != nil {
		return err
	}
	p.files = append(p.files, file)
	return nil
}
