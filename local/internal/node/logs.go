package node

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// containerLog is the CRI-format log file of one container attempt:
// "<RFC3339Nano> stdout|stderr F|P <line>". Lines longer than maxLogLine
// are split into partial (P) records.
type containerLog struct {
	mu    sync.Mutex
	f     *os.File
	clock clock.Clock
	bufs  map[string]*bytes.Buffer
}

const maxLogLine = 16 << 10

// logPath is where attempt of container logs below the pod's directory.
func logPath(podDir, container string, attempt int) string {
	return filepath.Join(podDir, "logs", container, strconv.Itoa(attempt)+".log")
}

// openContainerLog creates the log file of an attempt.
func openContainerLog(podDir, container string, attempt int, clk clock.Clock) (*containerLog, error) {
	path := logPath(podDir, container, attempt)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("creating the log directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating the log file: %w", err)
	}
	return &containerLog{f: f, clock: clk, bufs: map[string]*bytes.Buffer{}}, nil
}

// stream returns the writer of stdout or stderr.
func (l *containerLog) stream(name string) io.Writer {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.bufs[name] = &bytes.Buffer{}
	return logStream{l: l, name: name}
}

type logStream struct {
	l    *containerLog
	name string
}

// Write implements io.Writer: complete lines become records.
func (s logStream) Write(p []byte) (int, error) {
	s.l.mu.Lock()
	defer s.l.mu.Unlock()
	buf := s.l.bufs[s.name]
	buf.Write(p)
	for {
		line, err := buf.ReadBytes('\n')
		if err != nil {
			rest := line
			for len(rest) > maxLogLine {
				if werr := s.l.record(s.name, "P", rest[:maxLogLine]); werr != nil {
					return 0, werr
				}
				rest = rest[maxLogLine:]
			}
			buf.Reset()
			buf.Write(rest)
			return len(p), nil
		}
		if werr := s.l.record(s.name, "F", line[:len(line)-1]); werr != nil {
			return 0, werr
		}
	}
}

// record writes one CRI record; callers hold mu.
func (l *containerLog) record(stream, tag string, line []byte) error {
	if l.f == nil {
		return os.ErrClosed
	}
	ts := l.clock.Now().UTC().Format(time.RFC3339Nano)
	_, err := fmt.Fprintf(l.f, "%s %s %s %s\n", ts, stream, tag, line)
	return err
}

// Close writes what remains of unterminated lines and closes the file.
func (l *containerLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	for _, name := range []string{"stdout", "stderr"} {
		if buf := l.bufs[name]; buf != nil && buf.Len() > 0 {
			_ = l.record(name, "F", buf.Bytes())
		}
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// logRecord is one parsed CRI line.
type logRecord struct {
	time    time.Time
	stream  string
	partial bool
	content []byte
}

// parseRecord parses "<time> <stream> <tag> <content>".
func parseRecord(line []byte) (logRecord, error) {
	parts := bytes.SplitN(line, []byte(" "), 4)
	if len(parts) < 3 {
		return logRecord{}, errors.New("malformed CRI log line")
	}
	t, err := time.Parse(time.RFC3339Nano, string(parts[0]))
	if err != nil {
		return logRecord{}, err
	}
	r := logRecord{time: t, stream: string(parts[1]), partial: string(parts[2]) == "P"}
	if len(parts) == 4 {
		r.content = parts[3]
	}
	return r, nil
}

// logOptions select what kubectl logs returns.
type logOptions struct {
	Tail       int // <0: all
	LimitBytes int
	Timestamps bool
	Follow     bool
	Since      time.Time
}

// readLog writes the records of path selected by opts to w; with Follow it
// keeps reading until done is closed and the file is drained, or ctx ends.
func readLog(ctx context.Context, path string, opts logOptions, done <-chan struct{}, clk clock.WithTicker, w io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	out := &limitWriter{w: w, left: opts.LimitBytes}
	r := bufio.NewReader(f)
	rest, err := writeInitial(r, opts, out)
	if err != nil || !opts.Follow {
		return ignoreLimit(err)
	}
	return ignoreLimit(follow(ctx, r, rest, opts, done, clk, out))
}

// writeInitial writes what the file holds now, honouring since and tail;
// it returns an incomplete last line (being written) for follow.
func writeInitial(r *bufio.Reader, opts logOptions, out io.Writer) ([]byte, error) {
	var recs []logRecord
	var rest []byte
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			rest = line
			break
		}
		rec, perr := parseRecord(bytes.TrimSuffix(line, []byte("\n")))
		if perr != nil || rec.time.Before(opts.Since) {
			continue
		}
		recs = append(recs, rec)
	}
	if opts.Tail >= 0 {
		recs = tailRecords(recs, opts.Tail)
	}
	for _, rec := range recs {
		if err := writeRecord(out, rec, opts.Timestamps); err != nil {
			return nil, err
		}
	}
	return rest, nil
}

// tailRecords keeps the records of the last n lines (partials joined).
func tailRecords(recs []logRecord, n int) []logRecord {
	lines := 0
	for i := len(recs) - 1; i >= 0; i-- {
		if !recs[i].partial {
			lines++
		}
		if lines > n {
			return recs[i+1:]
		}
	}
	return recs
}

// writeRecord writes one record as kubectl logs shows it.
func writeRecord(w io.Writer, rec logRecord, timestamps bool) error {
	var b bytes.Buffer
	if timestamps {
		b.WriteString(rec.time.Format(time.RFC3339Nano))
		b.WriteByte(' ')
	}
	b.Write(rec.content)
	if !rec.partial {
		b.WriteByte('\n')
	}
	_, err := w.Write(b.Bytes())
	return err
}

// follow streams records appended after the initial read.
func follow(ctx context.Context, r *bufio.Reader, pending []byte, opts logOptions, done <-chan struct{}, clk clock.WithTicker, out io.Writer) error {
	ticker := clk.NewTicker(100 * time.Millisecond)
	defer ticker.Stop()
	for {
		line, err := r.ReadBytes('\n')
		pending = append(pending, line...)
		if err == nil {
			if rec, perr := parseRecord(bytes.TrimSuffix(pending, []byte("\n"))); perr == nil {
				if werr := writeRecord(out, rec, opts.Timestamps); werr != nil {
					return werr
				}
			}
			pending = pending[:0]
			continue
		}
		if !errors.Is(err, io.EOF) {
			return err
		}
		select {
		case <-done:
			return nil
		default:
		}
		select {
		case <-ctx.Done():
			return nil
		case <-done:
		case <-ticker.C():
		}
	}
}

// errLimit ends reading once limitBytes were written.
var errLimit = errors.New("log byte limit reached")

// limitWriter writes at most left bytes (0: no limit).
type limitWriter struct {
	w       io.Writer
	left    int
	limited bool
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.left <= 0 && l.limited {
		return 0, errLimit
	}
	if l.left > 0 {
		l.limited = true
		if len(p) > l.left {
			p = p[:l.left]
		}
		l.left -= len(p)
	}
	n, err := l.w.Write(p)
	if err == nil && l.limited && l.left == 0 {
		return n, errLimit
	}
	return n, err
}

func ignoreLimit(err error) error {
	if errors.Is(err, errLimit) {
		return nil
	}
	return err
}
