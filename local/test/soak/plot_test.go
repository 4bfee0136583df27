package soak_test

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"time"
)

// The plot (memory.png): RSS in MiB (red, top panel) and goroutines (blue,
// bottom panel) over the soak's minutes, each panel's y axis from 0 to its
// labelled maximum, the x axis from 0 to the labelled last minute. The
// standard library draws no text, so labels are numbers in a 3x5 pixel
// font; summary.md says what the panels are.
const (
	plotW, plotH = 900, 520
	plotLeft     = 70
	plotRight    = plotW - 20
	glyphScale   = 3
)

var (
	panelRSS        = image.Rect(plotLeft, 20, plotRight, 240)
	panelGoroutines = image.Rect(plotLeft, 280, plotRight, 500)
	colRSS          = color.RGBA{200, 30, 30, 255}
	colGoroutines   = color.RGBA{30, 60, 200, 255}
	colFrame        = color.RGBA{90, 90, 90, 255}
	colGrid         = color.RGBA{225, 225, 225, 255}
)

// glyphs are 3x5 bitmaps of the characters the labels use, a row per
// element, the leftmost pixel the highest of 3 bits.
var glyphs = map[rune][5]uint8{
	'0': {7, 5, 5, 5, 7}, '1': {2, 6, 2, 2, 7}, '2': {7, 1, 7, 4, 7}, '3': {7, 1, 7, 1, 7},
	'4': {5, 5, 7, 1, 1}, '5': {7, 4, 7, 1, 7}, '6': {7, 4, 7, 5, 7}, '7': {7, 1, 1, 1, 1},
	'8': {7, 5, 7, 5, 7}, '9': {7, 5, 7, 1, 7}, '.': {0, 0, 0, 0, 2},
}

// writePlot draws the samples into a PNG file at path.
func writePlot(path string, samples []sample) error {
	img := image.NewRGBA(image.Rect(0, 0, plotW, plotH))
	fill(img, img.Bounds(), color.White)
	end := time.Minute
	if len(samples) > 0 && samples[len(samples)-1].at > end {
		end = samples[len(samples)-1].at
	}
	drawPanel(img, panelRSS, samples, end, colRSS, rssMiB(samples))
	drawPanel(img, panelGoroutines, samples, end, colGoroutines, goroutines(samples))
	drawText(img, panelGoroutines.Min.X, panelGoroutines.Max.Y+6, "0", colFrame)
	minutes := fmt.Sprintf("%.1f", end.Minutes())
	drawText(img, panelGoroutines.Max.X-len(minutes)*4*glyphScale, panelGoroutines.Max.Y+6, minutes, colFrame)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// drawPanel draws one series into r: frame, grid, y labels, the line.
func drawPanel(img *image.RGBA, r image.Rectangle, samples []sample, end time.Duration, c color.RGBA, vals []float64) {
	top := 1.0
	for _, v := range vals {
		top = max(top, v*1.1)
	}
	for i := 1; i < 4; i++ {
		y := r.Max.Y - i*r.Dy()/4
		hline(img, r.Min.X, r.Max.X, y, colGrid)
	}
	frame(img, r, colFrame)
	drawText(img, 4, r.Min.Y, fmt.Sprintf("%.0f", top), c)
	drawText(img, 4, r.Max.Y-5*glyphScale, "0", c)
	point := func(i int) image.Point {
		x := r.Min.X + int(float64(r.Dx())*samples[i].at.Seconds()/end.Seconds())
		y := r.Max.Y - int(float64(r.Dy())*vals[i]/top)
		return image.Pt(x, y)
	}
	for i := 1; i < len(vals); i++ {
		line(img, point(i-1), point(i), c)
		line(img, point(i-1).Add(image.Pt(0, 1)), point(i).Add(image.Pt(0, 1)), c)
	}
}

func fill(img *image.RGBA, r image.Rectangle, c color.Color) {
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			img.Set(x, y, c)
		}
	}
}

func hline(img *image.RGBA, x0, x1, y int, c color.Color) {
	for x := x0; x <= x1; x++ {
		img.Set(x, y, c)
	}
}

func frame(img *image.RGBA, r image.Rectangle, c color.Color) {
	hline(img, r.Min.X, r.Max.X, r.Min.Y, c)
	hline(img, r.Min.X, r.Max.X, r.Max.Y, c)
	for y := r.Min.Y; y <= r.Max.Y; y++ {
		img.Set(r.Min.X, y, c)
		img.Set(r.Max.X, y, c)
	}
}

// line draws a straight line from a to b (Bresenham) and returns how many
// pixels it set. The error term is doubled once per step, before either
// axis moves: doubling it again after the x step let the walk step past b
// on some slopes and never stop (a 30-minute soak hung drawing its plot).
// The walk is bounded by the longer axis all the same.
func line(img *image.RGBA, a, b image.Point, c color.Color) int {
	dx, dy := abs(b.X-a.X), -abs(b.Y-a.Y)
	sx, sy := sign(b.X-a.X), sign(b.Y-a.Y)
	e := dx + dy
	p := a
	for n := 1; ; n++ {
		img.Set(p.X, p.Y, c)
		if p == b || n > max(dx, -dy) {
			return n
		}
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			p.X += sx
		}
		if e2 <= dx {
			e += dx
			p.Y += sy
		}
	}
}

// drawText draws s (digits and dots) with its top left corner at x, y.
func drawText(img *image.RGBA, x, y int, s string, c color.Color) {
	for _, ch := range s {
		g := glyphs[ch]
		for row, bits := range g {
			for col := range 3 {
				if bits&(4>>col) != 0 {
					fill(img, image.Rect(x+col*glyphScale, y+row*glyphScale, x+(col+1)*glyphScale, y+(row+1)*glyphScale), c)
				}
			}
		}
		x += 4 * glyphScale
	}
}

func abs(v int) int { return max(v, -v) }

func sign(v int) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}
