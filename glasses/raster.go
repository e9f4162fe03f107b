package glasses

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"strconv"

	"github.com/veraneural/vera-gateway/devices"
	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// RenderPage rasterises page i (0-based) of the layout by drawing its ops:
// a dark panel on black (black is transparent on additive displays), text
// with the same advances layout measured, and the control row. Green
// surfaces are quantised to their intensity levels.
func (l *Layout) RenderPage(i int) (*image.RGBA, error) {
	if i < 0 || i >= len(l.Pages) {
		return nil, fmt.Errorf("glasses: render page %d of %d: %w", i+1, len(l.Pages), ErrLayout)
	}
	fs, err := facesFor(l.Surface)
	if err != nil {
		return nil, err
	}
	ops, err := l.pageOps(fs, l.Pages[i])
	if err != nil {
		return nil, err
	}
	s := l.Surface
	img := image.NewRGBA(image.Rect(0, 0, s.Width, s.Height))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.RGBA{A: 255}), image.Point{}, draw.Src)
	r := rasterizer{img: img, faces: map[faceKey]font.Face{}}
	defer r.close()
	for _, op := range ops {
		if err := r.draw(op); err != nil {
			return nil, err
		}
	}
	if s.Colors.Model == devices.ColorGreen {
		quantizeGreen(img, s.Colors.Levels)
	}
	return img, nil
}

// WritePNG renders page i and encodes it as PNG.
func (l *Layout) WritePNG(w io.Writer, i int) error {
	img, err := l.RenderPage(i)
	if err != nil {
		return err
	}
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	var out image.Image = img
	if p := toPaletted(img); p != nil {
		out = p // a few dozen colours: 1 byte/pixel and no PNG filtering
	}
	if err := enc.Encode(w, out); err != nil {
		return fmt.Errorf("glasses: encode png: %w", err)
	}
	return nil
}

// rasterizer draws ops onto one image. Faces are per render because
// opentype faces are not safe for concurrent use; the parsed fonts and
// advances behind them are shared.
type rasterizer struct {
	img   *image.RGBA
	faces map[faceKey]font.Face
}

func (r *rasterizer) close() {
	for _, f := range r.faces {
		_ = f.Close()
	}
}

func (r *rasterizer) face(k faceKey) (font.Face, *metrics, error) {
	m, err := metricsFor(k.bold, k.px)
	if err != nil {
		return nil, nil, err
	}
	if f, ok := r.faces[k]; ok {
		return f, m, nil
	}
	f, err := opentype.NewFace(m.font, &opentype.FaceOptions{Size: float64(k.px), DPI: 72, Hinting: font.HintingNone})
	if err != nil {
		return nil, nil, fmt.Errorf("glasses: new face: %w", err)
	}
	r.faces[k] = f
	return f, m, nil
}

func (r *rasterizer) draw(op Op) error {
	switch op.Op {
	case "panel":
		fillRounded(r.img, image.Rect(op.X, op.Y, op.X+op.W, op.Y+op.H), op.R, parseHex(op.Fill))
	case "text":
		return r.text(op.X, op.Y, faceKey{op.Bold, op.Px}, parseHex(op.Color), op.Text)
	case "button":
		rect := image.Rect(op.X, op.Y, op.X+op.W, op.Y+op.H)
		if op.Focus {
			fillRounded(r.img, rect, op.R, parseHex(colorFocus))
			fillRounded(r.img, rect.Inset(4), max(op.R-4, 0), parseHex(op.Fill))
		} else {
			fillRounded(r.img, rect.Inset(2), op.R, parseHex(op.Fill))
		}
		_, m, err := r.face(faceKey{false, op.Px})
		if err != nil {
			return err
		}
		w, err := m.widthPx(op.Text)
		if err != nil {
			return err
		}
		return r.text(op.X+(op.W-w)/2, op.Y+m.baseline(op.H), faceKey{false, op.Px}, parseHex(op.Color), op.Text)
	default:
		return fmt.Errorf("glasses: unknown op %q: %w", op.Op, ErrLayout)
	}
	return nil
}

func (r *rasterizer) text(x, baseline int, k faceKey, c color.RGBA, s string) error {
	f, m, err := r.face(k)
	if err != nil {
		return err
	}
	src := image.NewUniform(c)
	dot := fixed.P(x, baseline)
	for _, ch := range s {
		g, err := m.glyph(ch)
		if err != nil {
			return err
		}
		if ch != ' ' {
			dr, mask, mp, _, ok := f.Glyph(dot, ch)
			if !ok {
				return &GlyphError{Rune: ch}
			}
			if a, ok := mask.(*image.Alpha); ok {
				blendQuantized(r.img, dr, c, a, mp)
			} else {
				draw.DrawMask(r.img, dr, src, image.Point{}, mask, mp, draw.Over)
			}
		}
		dot.X += g.advance
	}
	return nil
}

// fillRounded fills rect with c, cutting corners of radius rad.
func fillRounded(img *image.RGBA, rect image.Rectangle, rad int, c color.RGBA) {
	rect = rect.Intersect(img.Bounds())
	rad = min(rad, rect.Dx()/2, rect.Dy()/2)
	for y := rect.Min.Y; y < rect.Max.Y; y++ {
		inset := 0
		var dy int
		switch {
		case y < rect.Min.Y+rad:
			dy = rect.Min.Y + rad - y
		case y >= rect.Max.Y-rad:
			dy = y - (rect.Max.Y - rad - 1)
		}
		if dy > 0 {
			// Horizontal inset of a circle of radius rad at height dy.
			for inset = 0; inset < rad; inset++ {
				dx := rad - inset
				if dx*dx+dy*dy <= rad*rad {
					break
				}
			}
		}
		row := img.Pix[img.PixOffset(rect.Min.X+inset, y):img.PixOffset(rect.Max.X-inset, y)]
		for i := 0; i+3 < len(row); i += 4 {
			row[i], row[i+1], row[i+2], row[i+3] = c.R, c.G, c.B, 255
		}
	}
}

// quantizeGreen maps each pixel's brightness to one of levels green
// intensities (4-bit G2, 1-bit G1): thresholded, never dithered.
func quantizeGreen(img *image.RGBA, levels int) {
	if levels < 2 {
		levels = 2
	}
	p := img.Pix
	for i := 0; i+3 < len(p); i += 4 {
		v := max(p[i], p[i+1], p[i+2])
		q := (int(v)*(levels-1) + 127) / 255
		p[i], p[i+1], p[i+2], p[i+3] = 0, uint8(q*255/(levels-1)), 0, 255
	}
}

func parseHex(s string) color.RGBA {
	if len(s) != 7 || s[0] != '#' {
		return color.RGBA{R: 255, G: 255, B: 255, A: 255}
	}
	v, err := strconv.ParseUint(s[1:], 16, 32)
	if err != nil {
		return color.RGBA{R: 255, G: 255, B: 255, A: 255}
	}
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}
}

// alphaLevels is how many coverage levels glyph edges keep. 16 levels look
// the same at 28 px on a 600×600 panel and keep a page to a few dozen
// colours, so it encodes as a small paletted PNG.
const alphaLevels = 16

// blendQuantized composites colour c through glyph coverage a onto img.
func blendQuantized(img *image.RGBA, dr image.Rectangle, c color.RGBA, a *image.Alpha, mp image.Point) {
	clip := dr.Intersect(img.Bounds())
	for y := clip.Min.Y; y < clip.Max.Y; y++ {
		for x := clip.Min.X; x < clip.Max.X; x++ {
			cov := a.AlphaAt(mp.X+x-dr.Min.X, mp.Y+y-dr.Min.Y).A
			if cov == 0 {
				continue
			}
			q := uint32((int(cov)*(alphaLevels-1)+127)/255) * 255 / (alphaLevels - 1)
			i := img.PixOffset(x, y)
			p := img.Pix[i : i+4 : i+4]
			p[0] = uint8((uint32(c.R)*q + uint32(p[0])*(255-q) + 127) / 255)
			p[1] = uint8((uint32(c.G)*q + uint32(p[1])*(255-q) + 127) / 255)
			p[2] = uint8((uint32(c.B)*q + uint32(p[2])*(255-q) + 127) / 255)
			p[3] = 255
		}
	}
}

// toPaletted converts img to a paletted image when it has at most 256
// colours, else returns nil (the caller encodes RGBA).
func toPaletted(img *image.RGBA) *image.Paletted {
	b := img.Bounds()
	pal := make(color.Palette, 0, 256)
	index := make(map[color.RGBA]uint8, 64)
	out := image.NewPaletted(b, nil)
	var last color.RGBA
	var lastIdx uint8
	have := false
	for y := b.Min.Y; y < b.Max.Y; y++ {
		row := img.Pix[img.PixOffset(b.Min.X, y):]
		orow := out.Pix[out.PixOffset(b.Min.X, y):]
		for x := 0; x < b.Dx(); x++ {
			c := color.RGBA{row[4*x], row[4*x+1], row[4*x+2], row[4*x+3]}
			if !have || c != last {
				i, ok := index[c]
				if !ok {
					if len(pal) == 256 {
						return nil
					}
					i = uint8(len(pal))
					index[c] = i
					pal = append(pal, c)
				}
				last, lastIdx, have = c, i, true
			}
			orow[x] = lastIdx
		}
	}
	out.Palette = pal
	return out
}
