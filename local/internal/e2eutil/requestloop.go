package e2eutil

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// RequestTimeout bounds one request of the loop; Serve answers the tiny
// application in milliseconds, so a request this slow counts as failed.
const RequestTimeout = 5 * time.Second

// RequestInterval paces the loop (up to 20 requests a second): enough to
// see any gap in serving, little enough to leave the two CPUs to the
// clusters starting meanwhile.
const RequestInterval = 50 * time.Millisecond

// Reply is the outcome of one request of the loop.
type Reply struct {
	At      time.Time
	Latency time.Duration
	Answer  string // the body, when the status was 200
	Err     error  // a transport error, a timeout or a status other than 200
}

// RequestLoop sends GET requests to one URL, one after another, until
// stopped, and keeps every reply. Each request opens a new connection, as a
// client behind a load balancer would: a kept-alive connection stays on the
// Pod it was opened to whatever the Service selects, so it would measure
// the Pod's lifetime, not the Service's switch.
type RequestLoop struct {
	url    string
	client *http.Client
	stop   chan struct{}
	done   chan struct{}

	mu      sync.Mutex
	replies []Reply
}

// StartRequestLoop starts sending requests to url.
func StartRequestLoop(url string) *RequestLoop {
	l := &RequestLoop{
		url: url,
		client: &http.Client{
			Timeout:   RequestTimeout,
			Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil},
		},
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	go l.run()
	return l
}

func (l *RequestLoop) run() {
	defer close(l.done)
	ticker := time.NewTicker(RequestInterval)
	defer ticker.Stop()
	for {
		r := l.once()
		l.mu.Lock()
		l.replies = append(l.replies, r)
		l.mu.Unlock()
		select {
		case <-l.stop:
			return
		case <-ticker.C:
		}
	}
}

// once sends one request.
func (l *RequestLoop) once() Reply {
	began := time.Now()
	r := Reply{At: began}
	resp, err := l.client.Get(l.url) //nolint:noctx // the client's timeout bounds it
	if err != nil {
		r.Err = err
		r.Latency = time.Since(began)
		return r
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	r.Latency = time.Since(began)
	switch {
	case err != nil:
		r.Err = fmt.Errorf("reading the body: %w", err)
	case resp.StatusCode != http.StatusOK:
		r.Err = fmt.Errorf("status %d: %.200s", resp.StatusCode, strings.TrimSpace(string(body)))
	default:
		r.Answer = strings.TrimSpace(string(body))
	}
	return r
}

// Answered returns how many requests were answered with want so far.
func (l *RequestLoop) Answered(want string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.replies {
		if r.Err == nil && r.Answer == want {
			n++
		}
	}
	return n
}

// Replies returns every reply so far, oldest first, while the loop runs on.
func (l *RequestLoop) Replies() []Reply {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.replies)
}

// Finish stops the loop and returns every reply, oldest first.
func (l *RequestLoop) Finish() []Reply {
	close(l.stop)
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.replies)
}

// ReplyStats summarizes the replies of a loop.
type ReplyStats struct {
	Total, Failed int
	Answers       map[string]int
	// LastOf and FirstOf are the indexes of each answer's last and first
	// reply.
	LastOf, FirstOf         map[string]int
	Min, P50, P90, P99, Max time.Duration
}

func Summarize(replies []Reply) ReplyStats {
	st := ReplyStats{Total: len(replies), Answers: map[string]int{}, LastOf: map[string]int{}, FirstOf: map[string]int{}}
	latencies := make([]time.Duration, 0, len(replies))
	for i, r := range replies {
		latencies = append(latencies, r.Latency)
		if r.Err != nil {
			st.Failed++
			continue
		}
		st.Answers[r.Answer]++
		if _, seen := st.FirstOf[r.Answer]; !seen {
			st.FirstOf[r.Answer] = i
		}
		st.LastOf[r.Answer] = i
	}
	if len(latencies) == 0 {
		return st
	}
	slices.Sort(latencies)
	at := func(q float64) time.Duration { return latencies[int(q*float64(len(latencies)-1))] }
	st.Min, st.P50, st.P90, st.P99, st.Max = latencies[0], at(0.5), at(0.9), at(0.99), latencies[len(latencies)-1]
	return st
}

func (st ReplyStats) String() string {
	return fmt.Sprintf("%d requests, %d failed, answers %v; latency min %v, p50 %v, p90 %v, p99 %v, max %v",
		st.Total, st.Failed, st.Answers,
		st.Min.Round(time.Microsecond*100), st.P50.Round(time.Microsecond*100), st.P90.Round(time.Microsecond*100),
		st.P99.Round(time.Microsecond*100), st.Max.Round(time.Microsecond*100))
}

// Failures describes up to n failed replies, with their time relative to
// start.
func Failures(replies []Reply, start time.Time, n int) string {
	var b strings.Builder
	for _, r := range replies {
		if r.Err == nil {
			continue
		}
		if n == 0 {
			b.WriteString("  ...\n")
			break
		}
		n--
		fmt.Fprintf(&b, "  +%v: %v\n", r.At.Sub(start).Round(time.Millisecond), r.Err)
	}
	return b.String()
}

// CheckUpgradeReplies fails t when a request of a loop started at start
// failed or was answered by neither from nor to, and logs the figures.
// Answers of both clusters may interleave for a moment (the EndpointSlice
// controller may add the new endpoint before it removes the old one); that
// is logged, not failed.
func CheckUpgradeReplies(t testing.TB, replies []Reply, start time.Time, from, to string) ReplyStats {
	t.Helper()
	st := Summarize(replies)
	t.Logf("request loop over %v: %v", time.Since(start).Round(time.Second), st)
	if st.Failed > 0 {
		t.Errorf("%d of %d requests failed:\n%s", st.Failed, st.Total, Failures(replies, start, 10))
	}
	if len(st.Answers) != 2 || st.Answers[from] == 0 || st.Answers[to] == 0 {
		t.Errorf("answers %v, want some from %s then some from %s only", st.Answers, from, to)
		return st
	}
	first, last := st.FirstOf[to], st.LastOf[from]
	if last > first {
		t.Logf("both clusters answered from request %d to %d (%v)", first, last, replies[last].At.Sub(replies[first].At).Round(time.Millisecond))
	} else {
		t.Logf("the switch was one step: %s answered last at %v, %s first at %v",
			from, replies[last].At.Sub(start).Round(time.Millisecond), to, replies[first].At.Sub(start).Round(time.Millisecond))
	}
	return st
}

// LongestGap returns the longest time between two answered requests of a
// loop (from the first request when the loop began with failures, to the
// last when it ended with them) and when that gap began: how long a client
// retrying at once saw no answer.
func LongestGap(replies []Reply) (gap time.Duration, from time.Time) {
	if len(replies) == 0 {
		return 0, time.Time{}
	}
	last := replies[0].At
	for _, r := range replies {
		if r.Err != nil {
			continue
		}
		if d := r.At.Sub(last); d > gap {
			gap, from = d, last
		}
		last = r.At
	}
	if end := replies[len(replies)-1]; end.Err != nil {
		if d := end.At.Sub(last); d > gap {
			gap, from = d, last
		}
	}
	return gap, from
}
