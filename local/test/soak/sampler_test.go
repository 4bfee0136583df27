package soak_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// sample is one look at the operator process.
type sample struct {
	at         time.Duration // since the sampler started
	rssBytes   int64
	goroutines int
}

// sampler reads the operator's RSS (/proc/<pid>/status VmRSS) and its
// goroutines (go_goroutines of its /metrics) every period.
type sampler struct {
	pid        int
	metricsURL string
	http       *http.Client

	mu      sync.Mutex
	samples []sample
	errs    int
	lastErr error
}

func newSampler(pid int, metricsURL string) *sampler {
	return &sampler{pid: pid, metricsURL: metricsURL, http: &http.Client{Timeout: 5 * time.Second}}
}

// run samples every period until ctx ends.
func (s *sampler) run(ctx context.Context, period time.Duration) {
	began := time.Now()
	ticker := time.NewTicker(period)
	defer ticker.Stop()
	for {
		s.take(ctx, time.Since(began))
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// take records one sample, or counts the failure to take it.
func (s *sampler) take(ctx context.Context, at time.Duration) {
	rss, err := readRSS(s.pid)
	var g int
	if err == nil {
		g, err = s.goroutines(ctx)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.errs++
		s.lastErr = err
		return
	}
	s.samples = append(s.samples, sample{at: at, rssBytes: rss, goroutines: g})
}

// taken returns the samples so far, how many looks failed and the last
// failure.
func (s *sampler) taken() ([]sample, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sample(nil), s.samples...), s.errs, s.lastErr
}

// readRSS is VmRSS of /proc/<pid>/status in bytes.
func readRSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		rest, ok := strings.CutPrefix(lines.Text(), "VmRSS:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		return kb * 1024, err
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// goroutines is go_goroutines of the operator's metrics.
func (s *sampler) goroutines(ctx context.Context) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.metricsURL, nil)
	if err != nil {
		return 0, err
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return parseGoroutines(bufio.NewScanner(resp.Body))
}

// parseGoroutines finds the go_goroutines gauge in Prometheus text.
func parseGoroutines(lines *bufio.Scanner) (int, error) {
	for lines.Scan() {
		if v, ok := strings.CutPrefix(lines.Text(), "go_goroutines "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return int(f), err
		}
	}
	if err := lines.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no go_goroutines in the metrics")
}
