package glasses

import (
	"io"
	"testing"

	"github.com/veraneural/vera-gateway/devices"
)

// BenchmarkLayoutSafety3Meta: target ≤ 1 ms per layout.
func BenchmarkLayoutSafety3Meta(b *testing.B) {
	p := mustProfile(b, devices.MetaRayBanDisplay)
	c := mustSafety(b, threeResources()...)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := LayoutCard(c, p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderPNGPageMeta: one 600×600 page rasterised and PNG-encoded;
// target ≤ 20 ms.
func BenchmarkRenderPNGPageMeta(b *testing.B) {
	l, err := LayoutCard(mustSafety(b, threeResources()...), mustProfile(b, devices.MetaRayBanDisplay))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := l.WritePNG(io.Discard, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpsSafety3Meta: display-op document for the same card.
func BenchmarkOpsSafety3Meta(b *testing.B) {
	l, err := LayoutCard(mustSafety(b, threeResources()...), mustProfile(b, devices.MetaRayBanDisplay))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Ops(); err != nil {
			b.Fatal(err)
		}
	}
}
