package session

import (
	"fmt"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/glasses"
	"github.com/veraneural/vera-gateway/safety"
)

// GlassesLayout is the production CardLayout: the glasses package lays the
// card out with real font metrics (never truncated, numbers never split,
// title and n/N on every page) and its display-op document becomes the
// event's pages unchanged.
type GlassesLayout struct {
	Engine *glasses.Engine
}

// NewGlassesLayout returns a GlassesLayout on a glasses engine with cfg.
func NewGlassesLayout(cfg glasses.Config) (*GlassesLayout, error) {
	e, err := glasses.New(cfg, nil)
	if err != nil {
		return nil, fmt.Errorf("session: glasses layout: %w", err)
	}
	return &GlassesLayout{Engine: e}, nil
}

// LayoutSafety implements CardLayout.
func (g *GlassesLayout) LayoutSafety(cardID string, a safety.Assessment, p devices.Profile, sf devices.Surface) ([]glasses.OpsPage, error) {
	card, err := glasses.NewSafetyCard(cardID, a)
	if err != nil {
		return nil, fmt.Errorf("session: safety card %s: %w", cardID, err)
	}
	return g.layout(card, p, sf)
}

// layout lays any card out for one surface; its display-op pages are the
// event's pages, unchanged.
func (g *GlassesLayout) layout(card glasses.Card, p devices.Profile, sf devices.Surface) ([]glasses.OpsPage, error) {
	cardID := card.ID
	l, err := g.Engine.LayoutSurface(card, p.ID, sf)
	if err != nil {
		return nil, fmt.Errorf("session: lay out %s on %s/%s: %w", cardID, p.ID, sf.ID, err)
	}
	doc, err := l.Ops()
	if err != nil {
		return nil, fmt.Errorf("session: display ops %s on %s/%s: %w", cardID, p.ID, sf.ID, err)
	}
	return doc.Pages, nil
}
