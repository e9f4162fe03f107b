package web

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
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
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&b, img); err != nil {
		return nil, fmt.Errorf("web: glasses icon: %w", err)
	}
	return b.Bytes(), nil
}
