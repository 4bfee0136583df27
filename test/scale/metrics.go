package main

import (
	"context"
	"fmt"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
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
