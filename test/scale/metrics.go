package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// reconcileHistogram is controller-runtime's reconcile time histogram,
// labelled by controller.
const reconcileHistogram = "controller_runtime_reconcile_time_seconds"

// ReconcileTime is one controller's reconcile time quantiles, estimated
// from the histogram's buckets by linear interpolation (as Prometheus'
// histogram_quantile), so they are no finer than the buckets.
type ReconcileTime struct {
	Reconciles uint64  `json:"reconciles"`
	P50Seconds float64 `json:"p50Seconds"`
	P99Seconds float64 `json:"p99Seconds"`
}

// scrapeReconcileTimes reads the reconcile time of each controller from the
// metrics endpoint at addr (host:port, plain HTTP).
func scrapeReconcileTimes(ctx context.Context, addr string) (map[string]ReconcileTime, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping the operator's metrics: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scraping the operator's metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parsing the operator's metrics: %w", err)
	}
	return reconcileTimes(families[reconcileHistogram]), nil
}

// reconcileTimes is the quantiles of each controller's series of the
// reconcile histogram family mf (nil: none).
func reconcileTimes(mf *dto.MetricFamily) map[string]ReconcileTime {
	out := map[string]ReconcileTime{}
	for _, m := range mf.GetMetric() {
		controller := labelValue(m.GetLabel(), "controller")
		h := m.GetHistogram()
		if controller == "" || h.GetSampleCount() == 0 {
			continue
		}
		out[controller] = ReconcileTime{
			Reconciles: h.GetSampleCount(),
			P50Seconds: histogramQuantile(0.5, h),
			P99Seconds: histogramQuantile(0.99, h),
		}
	}
	return out
}

func labelValue(labels []*dto.LabelPair, name string) string {
	for _, l := range labels {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// apiLatencyHistogram is the API server's request latency histogram.
const apiLatencyHistogram = "apiserver_request_duration_seconds"

// APILatency is the API server's latency of one kind of write over a run,
// estimated from its histogram's buckets as ReconcileTime is.
type APILatency struct {
	Requests   uint64  `json:"requests"`
	P50Seconds float64 `json:"p50Seconds"`
	P99Seconds float64 `json:"p99Seconds"`
}

// apiMetrics are the API server's metric families a run reads.
type apiMetrics struct {
	// latency is the request latency histogram (nil when the API server
	// has none yet).
	latency *dto.MetricFamily
	// terminatedWatchers counts, by resource, the watchers the API server
	// closed because they did not take their events in time.
	terminatedWatchers *dto.MetricFamily
}

// terminatedWatchersCounter is the API server's count of watchers it closed
// for not keeping up.
const terminatedWatchersCounter = "apiserver_terminated_watchers_total"

// scrapeAPIServer reads the API server's metric families a run uses.
func scrapeAPIServer(ctx context.Context, cfg *rest.Config) (apiMetrics, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return apiMetrics{}, err
	}
	body, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return apiMetrics{}, fmt.Errorf("scraping the API server's metrics: %w", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return apiMetrics{}, fmt.Errorf("parsing the API server's metrics: %w", err)
	}
	return apiMetrics{latency: families[apiLatencyHistogram], terminatedWatchers: families[terminatedWatchersCounter]}, nil
}

// counterValue is a counter's value, also when the scrape gave no type.
func counterValue(m *dto.Metric) float64 {
	if c := m.GetCounter(); c != nil {
		return c.GetValue()
	}
	return m.GetUntyped().GetValue()
}

// terminatedWatchers is how many watchers of each resource the API server
// closed for not keeping up between the scrapes before and after; only
// resources with any.
func terminatedWatchers(before, after *dto.MetricFamily) map[string]int {
	counts := map[string]float64{}
	for _, m := range before.GetMetric() {
		counts[labelValue(m.GetLabel(), "resource")] -= counterValue(m)
	}
	for _, m := range after.GetMetric() {
		counts[labelValue(m.GetLabel(), "resource")] += counterValue(m)
	}
	out := map[string]int{}
	for resource, n := range counts {
		if n > 0 {
			out[resource] = int(n)
		}
	}
	return out
}

// Verbs of the API server's histogram: the writes, and the reads of one
// object.
var (
	writeVerbs = map[string]bool{"POST": true, "PUT": true, "PATCH": true, "DELETE": true, "DELETECOLLECTION": true}
	getVerbs   = map[string]bool{"GET": true}
)

// apiLatencies is the latency of each kind of request with one of verbs
// ("POST pods", "PATCH rayclusters/status", "GET pods") made between the
// scrapes before and after: the series of a kind (by scope, group,
// version, component) summed, the earlier scrape's counts subtracted.
func apiLatencies(before, after *dto.MetricFamily, verbs map[string]bool) map[string]APILatency {
	sums := map[string]*dto.Histogram{}
	add := func(mf *dto.MetricFamily, subtract bool) {
		for _, m := range mf.GetMetric() {
			verb := labelValue(m.GetLabel(), "verb")
			if !verbs[verb] || m.GetHistogram() == nil {
				continue
			}
			key := verb + " " + labelValue(m.GetLabel(), "resource")
			if sub := labelValue(m.GetLabel(), "subresource"); sub != "" {
				key += "/" + sub
			}
			sums[key] = addHistogram(sums[key], m.GetHistogram(), subtract)
		}
	}
	add(before, true)
	add(after, false)
	out := map[string]APILatency{}
	for key, h := range sums {
		if h.GetSampleCount() == 0 {
			continue
		}
		out[key] = APILatency{Requests: h.GetSampleCount(), P50Seconds: histogramQuantile(0.5, h), P99Seconds: histogramQuantile(0.99, h)}
	}
	return out
}

// addHistogram adds h's counts to sum, or subtracts them (a new histogram
// with h's buckets when sum is nil). The API server's series all have the
// same buckets. The counts wrap while a subtraction comes first; once the
// later scrape is added they are exact (uint64 arithmetic is modular).
func addHistogram(sum, h *dto.Histogram, subtract bool) *dto.Histogram {
	if sum == nil {
		sum = &dto.Histogram{SampleCount: new(uint64)}
		for _, b := range h.GetBucket() {
			sum.Bucket = append(sum.Bucket, &dto.Bucket{UpperBound: new(b.GetUpperBound()), CumulativeCount: new(uint64)})
		}
	}
	apply := func(total *uint64, n uint64) {
		if subtract {
			*total -= n
		} else {
			*total += n
		}
	}
	apply(sum.SampleCount, h.GetSampleCount())
	for i, b := range h.GetBucket() {
		if i < len(sum.Bucket) && sum.Bucket[i].GetUpperBound() == b.GetUpperBound() {
			apply(sum.Bucket[i].CumulativeCount, b.GetCumulativeCount())
		}
	}
	return sum
}
