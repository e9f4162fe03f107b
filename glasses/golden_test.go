package glasses

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/veraneural/vera-gateway/devices"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/glasses")

// goldenDir is <repo>/testdata/glasses (this package runs in <repo>/glasses).
const goldenDir = "../testdata/glasses"

func goldenCards(t *testing.T) map[string]Card {
	t.Helper()
	prompt, err := NewPrompt("confirm-7", "Send message to Sam?", "“Running 10 minutes late, sorry!” by text message to Sam Lee.",
		Action{ID: "send", Label: "Send", Voice: []string{"send"}}, Action{ID: "keep", Label: "Don't send", Voice: []string{"don't send"}})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]Card{
		"safety3": mustSafety(t, threeResources()...),
		"prompt":  prompt,
		"info-url": {ID: "info-1", Kind: KindInfo, Title: "Your reading list",
			Body: "Saved: https://www.example.org/articles/2026/11/how-to-sleep-better-after-a-long-day?ref=vera and two more."},
	}
}

// goldenOps compares every card × visual profile against ops JSON goldens.
func TestGoldenOps(t *testing.T) {
	cards := goldenCards(t)
	for _, name := range []string{"safety3", "prompt", "info-url"} {
		for _, p := range devices.Builtins() {
			if _, ok := p.Display(); !ok {
				continue
			}
			t.Run(name+"/"+p.ID, func(t *testing.T) {
				l, err := LayoutCard(cards[name], p)
				if err != nil {
					t.Fatal(err)
				}
				doc, err := l.Ops()
				if err != nil {
					t.Fatal(err)
				}
				got, err := json.MarshalIndent(doc, "", " ")
				if err != nil {
					t.Fatal(err)
				}
				compareGolden(t, filepath.Join(goldenDir, fmt.Sprintf("%s.%s.ops.json", name, p.ID)), append(got, '\n'))
			})
		}
	}
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./glasses -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from golden (run with -update after checking the change):\n%s", path, got)
	}
}

// TestGoldenPNG compares a few rasters pixel by pixel, allowing small
// anti-aliasing differences (the encoder's bytes are not the contract).
func TestGoldenPNG(t *testing.T) {
	cards := goldenCards(t)
	cases := []struct {
		card, device string
		page         int
	}{
		{"safety3", devices.MetaRayBanDisplay, 0},
		{"safety3", devices.MetaRayBanDisplay, 2},
		{"safety3", devices.EvenG2, 0},
		{"prompt", devices.MetaRayBanDisplay, 0},
	}
	for _, tc := range cases {
		name := fmt.Sprintf("%s.%s.page-%d.png", tc.card, tc.device, tc.page+1)
		t.Run(name, func(t *testing.T) {
			l, err := LayoutCard(cards[tc.card], mustProfile(t, tc.device))
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := l.WritePNG(&buf, tc.page); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(goldenDir, name)
			if *update {
				compareGolden(t, path, buf.Bytes())
				return
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatalf("%v (run go test ./glasses -update)", err)
			}
			defer f.Close()
			want, err := png.Decode(f)
			if err != nil {
				t.Fatal(err)
			}
			got, err := png.Decode(&buf)
			if err != nil {
				t.Fatal(err)
			}
			if d := pixelDiff(got, want); d > 0.002 {
				t.Fatalf("%s: %.3f%% of pixels differ", name, 100*d)
			}
		})
	}
}

// pixelDiff is the fraction of pixels whose channels differ by more than 24.
func pixelDiff(a, b image.Image) float64 {
	if a.Bounds() != b.Bounds() {
		return 1
	}
	r := a.Bounds()
	bad := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			r1, g1, b1, _ := a.At(x, y).RGBA()
			r2, g2, b2, _ := b.At(x, y).RGBA()
			if absDiff(r1, r2) > 24<<8 || absDiff(g1, g2) > 24<<8 || absDiff(b1, b2) > 24<<8 {
				bad++
			}
		}
	}
	return float64(bad) / float64(r.Dx()*r.Dy())
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

func TestRenderProperties(t *testing.T) {
	l, err := LayoutCard(mustSafety(t, threeResources()...), mustProfile(t, devices.MetaRayBanDisplay))
	if err != nil {
		t.Fatal(err)
	}
	img, err := l.RenderPage(0)
	if err != nil {
		t.Fatal(err)
	}
	// Corners are black (transparent on the display); the panel is dark, not black.
	if c := img.RGBAAt(0, 0); c.R != 0 || c.G != 0 || c.B != 0 {
		t.Errorf("corner = %v, want black", c)
	}
	if c := img.RGBAAt(300, 450); c == (img.RGBAAt(0, 0)) || c.R > 60 {
		t.Errorf("panel = %v, want dark non-black", c)
	}
	// Nothing is drawn in the 24 px margin except the panel.
	panel := img.RGBAAt(12, 300)
	for y := 24; y < 576; y++ {
		for x := 1; x < 23; x++ {
			if img.RGBAAt(x, y) != panel {
				t.Fatalf("ink in left margin at (%d,%d)", x, y)
			}
		}
	}
	if _, err := l.RenderPage(3); err == nil {
		t.Error("page out of range rendered")
	}
	// G2 is quantised to 16 green levels: no red or blue anywhere.
	g2, err := LayoutCard(mustSafety(t, threeResources()...), mustProfile(t, devices.EvenG2))
	if err != nil {
		t.Fatal(err)
	}
	gi, err := g2.RenderPage(0)
	if err != nil {
		t.Fatal(err)
	}
	levels := map[uint8]bool{}
	for i := 0; i < len(gi.Pix); i += 4 {
		if gi.Pix[i] != 0 || gi.Pix[i+2] != 0 {
			t.Fatal("g2 raster has red/blue")
		}
		levels[gi.Pix[i+1]] = true
	}
	if len(levels) > 16 || len(levels) < 3 {
		t.Fatalf("g2 uses %d green levels", len(levels))
	}
}

// Layout and rendering share the font caches; they must be safe to run
// concurrently (run with -race).
func TestConcurrentLayoutAndRender(t *testing.T) {
	profiles := []devices.Profile{mustProfile(t, devices.MetaRayBanDisplay), mustProfile(t, devices.EvenG2), mustProfile(t, devices.Phone)}
	card := mustSafety(t, threeResources()...)
	done := make(chan error, 6)
	for i := range 6 {
		go func() {
			l, err := LayoutCard(card, profiles[i%len(profiles)])
			if err == nil {
				_, err = l.RenderPage(i % len(l.Pages))
			}
			done <- err
		}()
	}
	for range 6 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
