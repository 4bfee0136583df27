package containerlog

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// File is the CRI-format log file of one container attempt being written:
// "<RFC3339Nano> stdout|stderr F|P <line>". Lines longer than maxLogLine
// are split into partial (P) records.
type File struct {
	mu    sync.Mutex
	f     *os.File
	clock clock.Clock
	bufs  map[string]*bytes.Buffer
}

// maxLogLine is the longest record a line is written as; longer lines are
// split, as the kubelet's CRI log writer splits them, so that a reader
// never has to buffer an unbounded line.
const maxLogLine = 16 << 10

// Path is where attempt of container logs below the pod's directory.
func Path(podDir, container string, attempt int) string {
	return filepath.Join(podDir, "logs", container, strconv.Itoa(attempt)+".log")
}

// Open creates the log file of an attempt.
func Open(podDir, container string, attempt int, clk clock.Clock) (*File, error) {
	path := Path(podDir, container, attempt)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("creating the log directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating the log file: %w", err)
	}
	return &File{f: f, clock: clk, bufs: map[string]*bytes.Buffer{}}, nil
}

// Stream returns the writer of the stream named name ("stdout" or
// "stderr"), to give a container as its output.
func (l *File) Stream(name string) io.Writer {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.bufs[name] = &bytes.Buffer{}
	return logStream{l: l, name: name}
}

// logStream is one stream of a File; it buffers an unterminated line.
type logStream struct {
	l    *File
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
func (l *File) record(stream, tag string, line []byte) error {
	if l.f == nil {
		return os.ErrClosed
	}
	ts := l.clock.Now().UTC().Format(time.RFC3339Nano)
	_, err := fmt.Fprintf(l.f, "%s %s %s %s\n", ts, stream, tag, line)
	return err
}

// Close writes what remains of unterminated lines and closes the file.
func (l *File) Close() error {
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
