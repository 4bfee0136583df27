package cluster_test

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// requestTimeout bounds one request of the loop; Serve answers the tiny
// application in milliseconds, so a request this slow counts as failed.
const requestTimeout = 5 * time.Second

// requestInterval paces the loop (up to 20 requests a second): enough to
// see any gap in serving, little enough to leave the two CPUs to the
// clusters starting meanwhile.
const requestInterval = 50 * time.Millisecond

// reply is the outcome of one request of the loop.
type reply struct {
	at      time.Time
	latency time.Duration
	answer  string // the body, when the status was 200
	err     error  // a transport error, a timeout or a status other than 200
}

// requestLoop sends GET requests to one URL, one after another, until
// stopped, and keeps every reply. Each request opens a new connection, as a
// client behind a load balancer would: a kept-alive connection stays on the
// Pod it was opened to whatever the Service selects, so it would measure
// the Pod's lifetime, not the Service's switch.
type requestLoop struct {
	url    string
	client *http.Client
	stop   chan struct{}
	done   chan struct{}

	mu      sync.Mutex
	replies []reply
}

// startRequestLoop starts sending requests to url.
func startRequestLoop(url string) *requestLoop {
	l := &requestLoop{
		url: url,
		client: &http.Client{
			Timeout:   requestTimeout,
			Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil},
		},
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	go l.run()
	return l
}

func (l *requestLoop) run() {
	defer close(l.done)
	ticker := time.NewTicker(requestInterval)
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
func (l *requestLoop) once() reply {
	began := time.Now()
	r := reply{at: began}
	resp, err := l.client.Get(l.url) //nolint:noctx // the client's timeout bounds it
	if err != nil {
		r.err = err
		r.latency = time.Since(began)
		return r
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	r.latency = time.Since(began)
	switch {
	case err != nil:
		r.err = fmt.Errorf("reading the body: %w", err)
	case resp.StatusCode != http.StatusOK:
		r.err = fmt.Errorf("status %d: %.200s", resp.StatusCode, strings.TrimSpace(string(body)))
	default:
		r.answer = strings.TrimSpace(string(body))
	}
	return r
}

// answered returns how many requests were answered with want so far.
func (l *requestLoop) answered(want string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.replies {
		if r.err == nil && r.answer == want {
			n++
		}
	}
	return n
}

// finish stops the loop and returns every reply, oldest first.
func (l *requestLoop) finish() []reply {
	close(l.stop)
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.replies)
}

// replyStats summarizes the replies of a loop.
type replyStats struct {
	total, failed int
	answers       map[string]int
	// lastOf and firstOf are the indexes of each answer's last and first
	// reply.
	lastOf, firstOf         map[string]int
	min, p50, p90, p99, max time.Duration
}

func summarize(replies []reply) replyStats {
	st := replyStats{total: len(replies), answers: map[string]int{}, lastOf: map[string]int{}, firstOf: map[string]int{}}
	latencies := make([]time.Duration, 0, len(replies))
	for i, r := range replies {
		latencies = append(latencies, r.latency)
		if r.err != nil {
			st.failed++
			continue
		}
		st.answers[r.answer]++
		if _, seen := st.firstOf[r.answer]; !seen {
			st.firstOf[r.answer] = i
		}
		st.lastOf[r.answer] = i
	}
	if len(latencies) == 0 {
		return st
	}
	slices.Sort(latencies)
	at := func(q float64) time.Duration { return latencies[int(q*float64(len(latencies)-1))] }
	st.min, st.p50, st.p90, st.p99, st.max = latencies[0], at(0.5), at(0.9), at(0.99), latencies[len(latencies)-1]
	return st
}

func (st replyStats) String() string {
	return fmt.Sprintf("%d requests, %d failed, answers %v; latency min %v, p50 %v, p90 %v, p99 %v, max %v",
		st.total, st.failed, st.answers,
		st.min.Round(time.Microsecond*100), st.p50.Round(time.Microsecond*100), st.p90.Round(time.Microsecond*100),
		st.p99.Round(time.Microsecond*100), st.max.Round(time.Microsecond*100))
}

// failures describes up to n failed replies, with their time relative to
// start.
func failures(replies []reply, start time.Time, n int) string {
	var b strings.Builder
	for _, r := range replies {
		if r.err == nil {
			continue
		}
		if n == 0 {
			b.WriteString("  ...\n")
			break
		}
		n--
		fmt.Fprintf(&b, "  +%v: %v\n", r.at.Sub(start).Round(time.Millisecond), r.err)
	}
	return b.String()
}
