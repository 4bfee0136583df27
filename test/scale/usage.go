package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/utils/clock"
)

// seriesStep is the least time between two points of a ready series, but
// for the last.
const seriesStep = 500 * time.Millisecond

// Usage is one process's CPU time over the run and its peak resident memory.
type Usage struct {
	CPUSeconds float64 `json:"cpuSeconds"`
	PeakRSSMiB float64 `json:"peakRSSMiB"`
}

// loadAvg reads the 1, 5 and 15 minute load averages.
func loadAvg() ([]float64, error) {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return nil, err
	}
	return parseLoadAvg(data)
}

// quietPoll is how often waitQuiet reads the load average.
const quietPoll = 5 * time.Second

// waitQuiet waits until read's 1-minute load average is below below, or
// atMost has passed, and returns the last load read; below 0 reads once.
// The previous run's tail (its control plane stopping, its audit log read)
// keeps the load up for a minute or two after it ends.
func waitQuiet(ctx context.Context, clk clock.Clock, read func() ([]float64, error), below float64, atMost time.Duration) ([]float64, error) {
	deadline := clk.Now().Add(atMost)
	for {
		load, err := read()
		if err != nil || below <= 0 || load[0] < below || !clk.Now().Before(deadline) {
			return load, err
		}
		select {
		case <-ctx.Done():
			return load, ctx.Err()
		case <-clk.After(quietPoll):
		}
	}
}

func parseLoadAvg(data []byte) ([]float64, error) {
	fields := strings.Fields(string(data))
	if len(fields) < 3 {
		return nil, fmt.Errorf("/proc/loadavg: %q", data)
	}
	out := make([]float64, 3)
	for i := range out {
		v, err := strconv.ParseFloat(fields[i], 64)
		if err != nil {
			return nil, fmt.Errorf("/proc/loadavg: %w", err)
		}
		out[i] = v
	}
	return out, nil
}

// procCPUSeconds is pid's user+system CPU time so far (0 once it exited).
func procCPUSeconds(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	return statCPUSeconds(data)
}

// procPeakRSSMiB is pid's peak resident memory since it started (VmHWM).
func procPeakRSSMiB(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return statusPeakRSSMiB(data)
}

func statusPeakRSSMiB(status []byte) (float64, error) {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:")
		if !ok {
			continue
		}
		kib, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
		if err != nil {
			return 0, fmt.Errorf("VmHWM: %w", err)
		}
		return kib / 1024, nil
	}
	return 0, errors.New("no VmHWM line")
}

// readySeries is how many objects were done over time, in seconds since
// the first create: a point on every change, but a change less than
// seriesStep after the point before the last replaces the last, so the
// series keeps at most two points per seriesStep and always ends with the
// latest count. A nil series records nothing.
type readySeries struct {
	began  time.Time
	points []seriesPoint
}

type seriesPoint struct {
	Seconds float64
	Ready   int
}

func newReadySeries(began time.Time) *readySeries { return &readySeries{began: began} }

func (s *readySeries) record(ready int) {
	if s != nil {
		s.add(seriesPoint{Seconds: time.Since(s.began).Seconds(), Ready: ready})
	}
}

func (s *readySeries) add(p seriesPoint) {
	n := len(s.points)
	if n > 0 && s.points[n-1].Ready == p.Ready {
		return
	}
	if n >= 2 && p.Seconds-s.points[n-2].Seconds < seriesStep.Seconds() {
		s.points[n-1] = p
		return
	}
	s.points = append(s.points, p)
}

// write stores the series as tab-separated "seconds ready" lines.
func (s *readySeries) write(path string) error {
	var b strings.Builder
	b.WriteString("seconds\tready\n")
	for _, p := range s.points {
		fmt.Fprintf(&b, "%.3f\t%d\n", p.Seconds, p.Ready)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// readSeries reads a file write wrote.
func readSeries(path string) ([]seriesPoint, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var points []seriesPoint
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if i == 0 {
			continue // header
		}
		var p seriesPoint
		if _, err := fmt.Sscanf(line, "%g\t%d", &p.Seconds, &p.Ready); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, i+1, err)
		}
		points = append(points, p)
	}
	return points, nil
}

// slug makes label safe in a file name.
func slug(label string) string {
	var b strings.Builder
	for _, r := range label {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}
