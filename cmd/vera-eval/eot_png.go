package main

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// The Pareto plot: x is mean latency (0–3 s), y is the false-cutoff rate
// (0–100 %); each policy's swept settings as dots and its frontier as a
// line; the 300/600 ms and 5/10 % budgets as dashed guides.
const (
	plotW, plotH         = 900, 600
	plotLeft, plotRight  = 70, 30
	plotTop, plotBottom  = 40, 60
	plotMaxMs, plotMaxFC = 3000.0, 1.0
)

var plotColors = []color.RGBA{{0x1f, 0x5f, 0xbf, 0xff}, {0xd9, 0x48, 0x1c, 0xff}, {0x2a, 0x9d, 0x3f, 0xff}}

func writeParetoPNG(path string, rep eotReport) error {
	img := image.NewRGBA(image.Rect(0, 0, plotW, plotH))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	x0, y0 := plotLeft, plotH-plotBottom
	x1, y1 := plotW-plotRight, plotTop
	px := func(ms float64) int { return x0 + int(min(ms, plotMaxMs)/plotMaxMs*float64(x1-x0)) }
	py := func(fcr float64) int { return y0 - int(min(fcr, plotMaxFC)/plotMaxFC*float64(y0-y1)) }
	grey := color.RGBA{0xbb, 0xbb, 0xbb, 0xff}
	black := color.RGBA{0, 0, 0, 0xff}
	// Axes, ticks, budgets.
	line(img, x0, y0, x1, y0, black, false)
	line(img, x0, y0, x0, y1, black, false)
	for ms := 0.0; ms <= plotMaxMs; ms += 500 {
		line(img, px(ms), y0, px(ms), y0+5, black, false)
		label(img, px(ms)-12, y0+20, fmt.Sprintf("%.0f", ms), black)
	}
	for f := 0.0; f <= plotMaxFC+1e-9; f += 0.1 {
		line(img, x0-5, py(f), x0, py(f), black, false)
		label(img, x0-40, py(f)+4, fmt.Sprintf("%.0f%%", 100*f), black)
	}
	for _, ms := range []float64{300, 600} {
		line(img, px(ms), y0, px(ms), y1, grey, true)
	}
	for _, f := range []float64{0.05, 0.10} {
		line(img, x0, py(f), x1, py(f), grey, true)
	}
	label(img, (x0+x1)/2-90, plotH-15, "mean latency after a true end (ms)", black)
	label(img, 10, 20, fmt.Sprintf("false cutoffs vs latency: %d points (%d holds, %d ends)", rep.DecisionPoints, rep.Holds, rep.Ends), black)
	for i, op := range rep.Policies {
		c := plotColors[i%len(plotColors)]
		for _, r := range rep.all[op.Name] {
			dot(img, px(r.LatencyMs), py(r.FCR), 2, c)
		}
		for k := 1; k < len(op.Pareto); k++ {
			a, b := op.Pareto[k-1], op.Pareto[k]
			// A frontier is a staircase: latency grows, cutoffs fall.
			line(img, px(a.LatencyMs), py(a.FCR), px(b.LatencyMs), py(a.FCR), c, false)
			line(img, px(b.LatencyMs), py(a.FCR), px(b.LatencyMs), py(b.FCR), c, false)
		}
		if d := op.Default; d != nil {
			dot(img, px(d.LatencyMs), py(d.FCR), 5, c)
		}
		label(img, x1-200, y1+20+18*i, fmt.Sprintf("%s (big dot: default)", op.Name), c)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func label(img *image.RGBA, x, y int, s string, c color.Color) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

func dot(img *image.RGBA, x, y, r int, c color.Color) {
	for dy := -r; dy <= r; dy++ {
		for dx := -r; dx <= r; dx++ {
			if dx*dx+dy*dy <= r*r {
				img.Set(x+dx, y+dy, c)
			}
		}
	}
}

// line draws from (xa,ya) to (xb,yb) (Bresenham), dashed if asked.
func line(img *image.RGBA, xa, ya, xb, yb int, c color.Color, dashed bool) {
	dx, dy := abs(xb-xa), -abs(yb-ya)
	sx, sy := sign(xb-xa), sign(yb-ya)
	e := dx + dy
	for n := 0; ; n++ {
		if !dashed || (n/6)%2 == 0 {
			img.Set(xa, ya, c)
			img.Set(xa, ya+1, c)
		}
		if xa == xb && ya == yb {
			return
		}
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			xa += sx
		}
		if e2 <= dx {
			e += dx
			ya += sy
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}
