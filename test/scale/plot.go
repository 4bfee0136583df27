package main

import (
	"errors"
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// plotReady draws the ready-over-time series of results (those that have
// one) into a PNG at path: one step line per run, labelled
// "<kind> N=<n> <label>".
func plotReady(results []Result, path string) error {
	p := plot.New()
	p.Title.Text = "Ready over time"
	p.X.Label.Text = "seconds since the first create"
	p.Y.Label.Text = "ready (RayClusters, floor clusters or complete RayJobs)"
	// The lines rise from bottom left to top right: the top left is free.
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(10), vg.Points(-10)
	drawn := 0
	for i := range results {
		r := &results[i]
		if r.ReadySeries == "" {
			continue
		}
		points, err := readSeries(r.ReadySeries)
		if err != nil {
			return err
		}
		line, err := plotter.NewLine(seriesXYs(points))
		if err != nil {
			return fmt.Errorf("%s: %w", r.ReadySeries, err)
		}
		line.StepStyle = plotter.PostStep
		line.Color = plotutil.Color(drawn)
		line.Dashes = plotutil.Dashes(drawn)
		line.Width = vg.Points(1.5)
		p.Add(line)
		p.Legend.Add(fmt.Sprintf("%s N=%d %s", r.Kind, r.N, r.Label), line)
		drawn++
	}
	if drawn == 0 {
		return errors.New("no run has a ready series to plot")
	}
	p.Add(plotter.NewGrid())
	// Room after the last step, which would otherwise sit on the border,
	// and above the lines for the legend, a line per run.
	p.X.Max *= 1.03
	p.Y.Max *= 1.05 + 0.07*float64(drawn)
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}

func seriesXYs(points []seriesPoint) plotter.XYs {
	xys := make(plotter.XYs, len(points))
	for i, pt := range points {
		xys[i].X, xys[i].Y = pt.Seconds, float64(pt.Ready)
	}
	return xys
}
