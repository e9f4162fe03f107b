package session

import (
	"fmt"

	"github.com/veraneural/vera-gateway/glasses"
)

// NewGlassesLayout returns the production CardLayout: the glasses engine
// with cfg, which lays cards out with real font metrics (never truncated,
// numbers never split, title and n/N on every page) and falls back to its
// plain layout for a card its fonts cannot draw.
func NewGlassesLayout(cfg glasses.Config) (*glasses.Engine, error) {
	e, err := glasses.New(cfg, nil)
	if err != nil {
		return nil, fmt.Errorf("session: glasses layout: %w", err)
	}
	return e, nil
}
