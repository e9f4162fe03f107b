package session

import (
	"fmt"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/gateway/event"
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
func (g *GlassesLayout) LayoutSafety(cardID string, a safety.Assessment, p devices.Profile, sf devices.Surface) ([]event.Page, error) {
	card, err := glasses.NewSafetyCard(cardID, a)
	if err != nil {
		return nil, fmt.Errorf("session: safety card %s: %w", cardID, err)
	}
	return g.layout(card, p, sf)
}

// layout lays any card out for one surface and converts its display-op
// pages to event pages unchanged.
func (g *GlassesLayout) layout(card glasses.Card, p devices.Profile, sf devices.Surface) ([]event.Page, error) {
	cardID := card.ID
	l, err := g.Engine.LayoutSurface(card, p.ID, sf)
	if err != nil {
		return nil, fmt.Errorf("session: lay out %s on %s/%s: %w", cardID, p.ID, sf.ID, err)
	}
	doc, err := l.Ops()
	if err != nil {
		return nil, fmt.Errorf("session: display ops %s on %s/%s: %w", cardID, p.ID, sf.ID, err)
	}
	pages := make([]event.Page, 0, len(doc.Pages))
	for _, dp := range doc.Pages {
		pg := event.Page{N: dp.N, Of: dp.Of, Title: dp.Title, TitleLines: dp.TitleLines, Lines: dp.Lines,
			Cont: dp.Cont, Resources: dp.Resources, Focus: dp.Focus, Ops: make([]event.Op, len(dp.Ops))}
		for _, st := range dp.Styles {
			pg.Styles = append(pg.Styles, string(st))
		}
		for _, c := range dp.Controls {
			pg.Controls = append(pg.Controls, event.Control{ID: c.ID, Label: c.Label, Role: string(c.Role)})
		}
		for i, op := range dp.Ops {
			pg.Ops[i] = event.Op{Op: op.Op, X: op.X, Y: op.Y, W: op.W, H: op.H, R: op.R, Px: op.Px, Bold: op.Bold,
				Color: op.Color, Fill: op.Fill, Text: op.Text, Style: string(op.Style), ID: op.ID, Focus: op.Focus}
		}
		pages = append(pages, pg)
	}
	return pages, nil
}
