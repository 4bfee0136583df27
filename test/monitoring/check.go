package monitoring

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// TargetLabels are the labels Prometheus adds to every scraped series (the
// scrape job and the target's address); a query may use them although the
// endpoint does not serve them.
var TargetLabels = []string{model.JobLabel, model.InstanceLabel}

// Scrape is what a /metrics endpoint served: for each series name (a
// histogram's _bucket, _sum and _count each), its label names with the
// values seen.
type Scrape map[string]map[string]map[string]bool

// ParseScrape parses the Prometheus text exposition format.
func ParseScrape(r io.Reader) (Scrape, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parsing the scrape: %w", err)
	}
	s := Scrape{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			for _, series := range seriesNames(name, f.GetType()) {
				s.add(series.name, m.GetLabel(), series.extra)
			}
		}
	}
	return s, nil
}

type seriesName struct {
	name  string
	extra string // the label only this series carries (le, quantile)
}

// seriesNames are the series a metric of a family of type typ is stored as.
func seriesNames(family string, typ dto.MetricType) []seriesName {
	switch typ {
	case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
		return []seriesName{{family + "_bucket", model.BucketLabel}, {family + "_sum", ""}, {family + "_count", ""}}
	case dto.MetricType_SUMMARY:
		return []seriesName{{family, model.QuantileLabel}, {family + "_sum", ""}, {family + "_count", ""}}
	default:
		return []seriesName{{family, ""}}
	}
}

func (s Scrape) add(name string, pairs []*dto.LabelPair, extra string) {
	if s[name] == nil {
		s[name] = map[string]map[string]bool{}
	}
	set := func(label, value string) {
		if s[name][label] == nil {
			s[name][label] = map[string]bool{}
		}
		if value != "" {
			s[name][label][value] = true
		}
	}
	for _, p := range pairs {
		set(p.GetName(), p.GetValue())
	}
	if extra != "" {
		set(extra, "")
	}
}

// hasLabel reports whether series name carries label (or label is one the
// scrape adds).
func (s Scrape) hasLabel(name, label string) bool {
	if slices.Contains(TargetLabels, label) {
		return true
	}
	_, ok := s[name][label]
	return ok
}

// literalAlternation matches a regular expression that is only alternatives
// of plain words, whose every alternative must then be a value seen.
var literalAlternation = regexp.MustCompile(`^[A-Za-z0-9_.-]+(\|[A-Za-z0-9_.-]+)*$`)

// CheckLabelValues checks a label_values(metric, label) variable.
func (s Scrape) CheckLabelValues(v LabelValues) []error {
	if s[v.Metric] == nil {
		return []error{fmt.Errorf("%s: no metric %s in the scrape", v.Source, v.Metric)}
	}
	if !s.hasLabel(v.Metric, v.Label) {
		return []error{fmt.Errorf("%s: metric %s has no label %s", v.Source, v.Metric, v.Label)}
	}
	return nil
}

// Check parses q and checks it against the scrape: every metric it selects
// is served; every label a selector matches on, an aggregation groups by or
// a vector match names is on those metrics; and every value a selector
// matches exactly (or as an alternation of plain words) was seen, unless it
// holds a Grafana variable.
func (s Scrape) Check(q Query) []error {
	expr, err := Parse(q)
	if err != nil {
		return []error{err}
	}
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", q.Source, fmt.Sprintf(format, args...)))
	}
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		switch n := node.(type) {
		case *parser.VectorSelector:
			s.checkSelector(n, fail)
		case *parser.AggregateExpr:
			if !n.Without {
				s.checkGrouping("aggregation", n.Grouping, selectedNames(n.Expr), fail)
			}
		case *parser.BinaryExpr:
			if m := n.VectorMatching; m != nil && m.On {
				s.checkGrouping("vector matching", m.MatchingLabels, selectedNames(n.LHS), fail)
				s.checkGrouping("vector matching", m.MatchingLabels, selectedNames(n.RHS), fail)
			}
		}
		return nil
	})
	return errs
}

func (s Scrape) checkSelector(vs *parser.VectorSelector, fail func(string, ...any)) {
	name := selectorName(vs)
	if name == "" {
		fail("selector %s names no metric", vs)
		return
	}
	if s[name] == nil {
		fail("no metric %s in the scrape", name)
		return
	}
	for _, m := range vs.LabelMatchers {
		if m.Name == model.MetricNameLabel {
			continue
		}
		if !s.hasLabel(name, m.Name) {
			fail("metric %s has no label %s", name, m.Name)
			continue
		}
		for _, v := range expectedValues(m) {
			if !s[name][m.Name][v] && !slices.Contains(TargetLabels, m.Name) {
				fail("no series %s{%s=%q} in the scrape", name, m.Name, v)
			}
		}
	}
}

// expectedValues are the values a matcher asks for that a scrape must show.
func expectedValues(m *labels.Matcher) []string {
	if strings.Contains(m.Value, "$") || m.Value == "" {
		return nil
	}
	switch {
	case m.Type == labels.MatchEqual:
		return []string{m.Value}
	case m.Type == labels.MatchRegexp && literalAlternation.MatchString(m.Value):
		return strings.Split(m.Value, "|")
	}
	return nil
}

func (s Scrape) checkGrouping(what string, grouping, names []string, fail func(string, ...any)) {
	for _, label := range grouping {
		found := false
		for _, name := range names {
			found = found || s.hasLabel(name, label)
		}
		if !found {
			fail("%s by %s: none of %v has that label", what, label, names)
		}
	}
}

// selectorName is the metric a selector selects.
func selectorName(vs *parser.VectorSelector) string {
	if vs.Name != "" {
		return vs.Name
	}
	for _, m := range vs.LabelMatchers {
		if m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
			return m.Value
		}
	}
	return ""
}

// selectedNames are the metrics the selectors under node select.
func selectedNames(node parser.Node) []string {
	var names []string
	parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			names = append(names, selectorName(vs))
		}
		return nil
	})
	return names
}
