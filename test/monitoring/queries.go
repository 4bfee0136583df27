// Package monitoring checks the operator's monitoring artifacts (the Grafana
// dashboard, the PrometheusRule, the ServiceMonitor) with Prometheus' own
// PromQL parser and rule loader, against what the operator's /metrics
// endpoint serves. It is a module of its own so that the operator's module
// never requires github.com/prometheus/prometheus.
package monitoring

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

// Query is a PromQL expression and where it comes from.
type Query struct {
	// Source names the panel, variable or rule.
	Source string
	// Expr is the PromQL expression as written there.
	Expr string
}

// LabelValues is a Grafana query variable label_values(metric, label).
type LabelValues struct {
	Source, Metric, Label string
}

// dashboard is the part of a Grafana dashboard that holds queries.
type dashboard struct {
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Type       string `json:"type"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	Title   string  `json:"title"`
	Panels  []panel `json:"panels"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}

var labelValuesCall = regexp.MustCompile(`^label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)$`)

// DashboardQueries returns the PromQL of every panel target of a Grafana
// dashboard (rows' nested panels included) and its label_values variables.
// A query variable of another form is an error: nothing would check it.
func DashboardQueries(data []byte) ([]Query, []LabelValues, error) {
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, nil, fmt.Errorf("decoding the dashboard: %w", err)
	}
	var queries []Query
	var walk func([]panel)
	walk = func(panels []panel) {
		for _, p := range panels {
			for _, t := range p.Targets {
				queries = append(queries, Query{Source: fmt.Sprintf("panel %q target %s", p.Title, t.RefID), Expr: t.Expr})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	var vars []LabelValues
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		m := labelValuesCall.FindStringSubmatch(v.Definition)
		if m == nil {
			return nil, nil, fmt.Errorf("variable %s: %q is not label_values(metric, label)", v.Name, v.Definition)
		}
		vars = append(vars, LabelValues{Source: "variable " + v.Name, Metric: m[1], Label: m[2]})
	}
	return queries, vars, nil
}

// newParser is the PromQL parser Prometheus uses by default.
func newParser() parser.Parser { return parser.NewParser(parser.Options{}) }

// LoadRules parses rule groups (a rule file, or a PrometheusRule's spec as
// YAML) with Prometheus' rule loader, which also parses every expression and
// every label and annotation template, and returns their expressions.
func LoadRules(data []byte) ([]Query, error) {
	groups, errs := rulefmt.Parse(data, false, model.UTF8Validation, newParser(), promslog.NewNopLogger())
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, err := range errs {
			msgs[i] = err.Error()
		}
		return nil, fmt.Errorf("loading rules: %s", strings.Join(msgs, "; "))
	}
	var queries []Query
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			name := r.Alert
			if name == "" {
				name = r.Record
			}
			queries = append(queries, Query{Source: fmt.Sprintf("rule %s/%s", g.Name, name), Expr: r.Expr})
		}
	}
	return queries, nil
}

// grafanaIntervals are Grafana's interval variables, replaced by a duration
// before parsing (Grafana does the same at query time).
var grafanaIntervals = strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h")

// Parse parses q's expression with Prometheus' PromQL parser, after
// Grafana's interval variables are replaced (other variables may only
// appear inside label matchers' strings).
func Parse(q Query) (parser.Expr, error) {
	expr, err := newParser().ParseExpr(grafanaIntervals.Replace(q.Expr))
	if err != nil {
		return nil, fmt.Errorf("%s: %q: %w", q.Source, q.Expr, err)
	}
	return expr, nil
}
