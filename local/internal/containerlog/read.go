package containerlog

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"time"

	"k8s.io/utils/clock"
)

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

// Options select what kubectl logs returns.
type Options struct {
	// Tail is the number of last lines to return; <0: all.
	Tail int
	// LimitBytes caps the bytes returned; 0: no cap.
	LimitBytes int
	// Timestamps prefixes each line with its time.
	Timestamps bool
	// Follow keeps streaming until the attempt ends.
	Follow bool
	// Since drops records older than it.
	Since time.Time
}

// Read writes the records of path selected by opts to w; with Follow it
// keeps reading until done is closed and the file is drained, or ctx ends.
// A tail is found by reading the file backwards from its end, and records
// are written as they are read: serving a log holds a few records in
// memory, whatever the file's size.
func Read(ctx context.Context, path string, opts Options, done <-chan struct{}, clk clock.WithTicker, w io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	start, err := initialOffset(f, opts)
	if err != nil {
		return err
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return err
	}
	out := &recordWriter{w: &limitWriter{w: w, left: opts.LimitBytes}, timestamps: opts.Timestamps}
	r := bufio.NewReader(f)
	rest, err := writeInitial(r, opts.Since, out)
	if err != nil || !opts.Follow {
		return ignoreLimit(err)
	}
	lf := &logFile{path: path, f: f, r: r}
	defer lf.close()
	return ignoreLimit(follow(ctx, lf, rest, done, clk, out))
}

// logFile is the file a follower reads, which a rotation replaces.
type logFile struct {
	path   string
	f      *os.File
	r      *bufio.Reader
	opened bool // f was opened by switchIfRotated: close it
}

// switchIfRotated moves to the file now at path once it is another than
// the one read (the log was rotated and the writer reopened it), and
// reports whether it did.
func (lf *logFile) switchIfRotated() bool {
	now, err := os.Stat(lf.path)
	if err != nil {
		return false // renamed, and not yet reopened by the writer
	}
	cur, err := lf.f.Stat()
	if err != nil || os.SameFile(now, cur) {
		return false
	}
	f, err := os.Open(lf.path)
	if err != nil {
		return false
	}
	lf.close()
	lf.f, lf.opened = f, true
	lf.r.Reset(f)
	return true
}

func (lf *logFile) close() {
	if lf.opened {
		_ = lf.f.Close()
	}
}

// initialOffset is where the records opts selects start: 0, or for a tail
// the start of the last opts.Tail lines.
func initialOffset(f *os.File, opts Options) (int64, error) {
	if opts.Tail < 0 {
		return 0, nil
	}
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return tailStart(f, st.Size(), opts.Tail, opts.Since)
}

// writeInitial writes the records from r's position to the end of what the
// file holds now, but those older than since; it returns an incomplete last
// line (being written) for follow.
func writeInitial(r *bufio.Reader, since time.Time, out *recordWriter) ([]byte, error) {
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return line, nil
		}
		rec, perr := parseRecord(bytes.TrimSuffix(line, []byte("\n")))
		if perr != nil || rec.time.Before(since) {
			continue
		}
		if err := out.write(rec); err != nil {
			return nil, err
		}
	}
}

// tailStart is the offset of the first record of the last n lines (a
// line's partial records joined) of the first size bytes of f, counting
// only records from since on.
func tailStart(f io.ReaderAt, size int64, n int, since time.Time) (int64, error) {
	start, lines := int64(0), 0
	err := backwardRecords(f, size, func(line []byte, end int64) bool {
		rec, err := parseRecord(line)
		if err != nil {
			return true
		}
		if !rec.partial {
			lines++
		}
		if lines > n || rec.time.Before(since) {
			start = end
			return false
		}
		return true
	})
	return start, err
}

// tailChunk is how much backwardRecords reads at a time.
const tailChunk = 32 << 10

// backwardRecords calls visit with each complete record (newline-terminated,
// newline left out) of the first size bytes of f, last first, and the offset
// just past it, until visit returns false. An incomplete last record is
// skipped.
func backwardRecords(f io.ReaderAt, size int64, visit func(line []byte, end int64) bool) error {
	pos := size
	var data []byte // f's bytes from pos on
	trimmed := false
	for {
		if !trimmed {
			if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
				data, trimmed = data[:i+1], true
			}
		}
		for trimmed && len(data) > 0 {
			j := bytes.LastIndexByte(data[:len(data)-1], '\n')
			if j < 0 && pos > 0 {
				break // the record starts before pos
			}
			if !visit(data[j+1:len(data)-1], pos+int64(len(data))) {
				return nil
			}
			data = data[:j+1]
		}
		if pos == 0 {
			return nil
		}
		n := min(tailChunk, pos)
		buf := make([]byte, n, n+int64(len(data)))
		if _, err := f.ReadAt(buf, pos-n); err != nil {
			return err
		}
		pos -= n
		data = append(buf, data...)
	}
}

// recordWriter writes records as kubectl logs shows them: a partial
// record's line goes on in the next record, and a timestamp, when asked
// for, starts each line, not each record.
type recordWriter struct {
	w          io.Writer
	timestamps bool
	midLine    bool // the last record written was partial
}

func (rw *recordWriter) write(rec logRecord) error {
	var b bytes.Buffer
	if rw.timestamps && !rw.midLine {
		b.WriteString(rec.time.Format(time.RFC3339Nano))
		b.WriteByte(' ')
	}
	b.Write(rec.content)
	if !rec.partial {
		b.WriteByte('\n')
	}
	rw.midLine = rec.partial
	_, err := rw.w.Write(b.Bytes())
	return err
}

// follow streams records appended after the initial read, going on in the
// new file when the log is rotated.
func follow(ctx context.Context, lf *logFile, pending []byte, done <-chan struct{}, clk clock.WithTicker, out *recordWriter) error {
	ticker := clk.NewTicker(100 * time.Millisecond)
	defer ticker.Stop()
	for {
		line, err := lf.r.ReadBytes('\n')
		pending = append(pending, line...)
		if err == nil {
			if rec, perr := parseRecord(bytes.TrimSuffix(pending, []byte("\n"))); perr == nil {
				if werr := out.write(rec); werr != nil {
					return werr
				}
			}
			pending = pending[:0]
			continue
		}
		if !errors.Is(err, io.EOF) {
			return err
		}
		if lf.switchIfRotated() {
			pending = pending[:0]
			continue
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

// Write implements io.Writer; it returns errLimit once the limit is met.
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

// ignoreLimit treats reaching the byte limit as a normal end.
func ignoreLimit(err error) error {
	if errors.Is(err, errLimit) {
		return nil
	}
	return err
}
