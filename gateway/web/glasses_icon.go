package web

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"

	"golang.org/x/image/vector"
)

// glassesIcon draws the app's 128×128 PNG icon (the glasses want a PNG
// larger than 52 px, no SVG): a light "V" in a ring on a dark plate, so it
// reads on the additive display where black is transparent.
func glassesIcon() ([]byte, error) {
	const n = 128
	img := image.NewRGBA(image.Rect(0, 0, n, n))
	paint := func(c color.RGBA, path func(z *vector.Rasterizer)) {
		z := vector.NewRasterizer(n, n)
		path(z)
		z.Draw(img, img.Bounds(), image.NewUniform(c), image.Point{})
	}
	circle := func(z *vector.Rasterizer, r float32, clockwise bool) {
		const steps = 96
		for i := 0; i <= steps; i++ {
			a := 2 * math.Pi * float64(i) / steps
			if !clockwise {
				a = -a
			}
			x, y := float32(64+float64(r)*math.Cos(a)), float32(64+float64(r)*math.Sin(a))
			if i == 0 {
				z.MoveTo(x, y)
			} else {
				z.LineTo(x, y)
			}
		}
		z.ClosePath()
	}
	paint(color.RGBA{0x1C, 0x1E, 0x21, 0xFF}, func(z *vector.Rasterizer) { circle(z, 62, true) })
	paint(color.RGBA{0x8A, 0xB4, 0xF8, 0xFF}, func(z *vector.Rasterizer) { circle(z, 54, true); circle(z, 47, false) })
	paint(color.RGBA{0xFF, 0xFF, 0xFF, 0xFF}, func(z *vector.Rasterizer) {
		pts := [][2]float32{{38, 40}, {51, 40}, {64, 78}, {77, 40}, {90, 40}, {70, 92}, {58, 92}}
		z.MoveTo(pts[0][0], pts[0][1])
		for _, p := range pts[1:] {
			z.LineTo(p[0], p[1])
		}
		z.ClosePath()
	})
	// A small palette keeps the file small (every kilobyte is 16 ms on
	// the glasses' link): the three colours, the plate and their blends
	// with each other at the anti-aliased edges.
	pal := color.Palette{color.RGBA{}}
	inks := []color.RGBA{{0x1C, 0x1E, 0x21, 0xFF}, {0x8A, 0xB4, 0xF8, 0xFF}, {0xFF, 0xFF, 0xFF, 0xFF}}
	for _, c := range inks {
		for a := 1; a <= 4; a++ { // the plate's rim over transparency
			k := uint8(a * 0x3F)
			pal = append(pal, color.RGBA{uint8(int(c.R) * int(k) / 255), uint8(int(c.G) * int(k) / 255), uint8(int(c.B) * int(k) / 255), k})
		}
	}
	for i, x := range inks {
		for _, y := range inks[i+1:] {
			for t := 1; t <= 6; t++ { // edges between two inks
				mix := func(p, q uint8) uint8 { return uint8((int(p)*(7-t) + int(q)*t) / 7) }
				pal = append(pal, color.RGBA{mix(x.R, y.R), mix(x.G, y.G), mix(x.B, y.B), 0xFF})
			}
		}
	}
	small := image.NewPaletted(img.Bounds(), pal)
	draw.Draw(small, small.Bounds(), img, image.Point{}, draw.Src)
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&b, small); err != nil {
		return nil, fmt.Errorf("web: glasses icon: %w", err)
	}
	return b.Bytes(), nil
}
