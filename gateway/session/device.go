package session

import (
	"fmt"

	"github.com/veraneural/vera-gateway/devices"
	"github.com/veraneural/vera-gateway/gateway/event"
	"github.com/veraneural/vera-gateway/safety"
)

// device is what a hello negotiated: the profile, the visual surfaces
// cards are laid out for, and the person's region. A device is never
// modified: negotiate publishes a new one, and every reader takes the one
// current when it starts (Session.device), lock-free.
type device struct {
	profile  devices.Profile
	surfaces []devices.Surface
	region   string
}

// device returns the negotiated device (New negotiates before anything
// reads it).
func (s *Session) device() *device { return s.dev.Load() }

// Profile returns the negotiated device profile.
func (s *Session) Profile() devices.Profile { return s.device().profile }

// negotiate applies a hello: the profile with its overrides, the visual
// surfaces the client shows, and the region (kept when the hello names
// none).
func (s *Session) negotiate(h *event.Hello) error {
	dh := devices.Hello{Profile: h.Device}
	if h.Overrides != nil {
		dh.Overrides = *h.Overrides
	}
	p, err := devices.Negotiate(dh)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadHello, err)
	}
	var surf []devices.Surface
	for _, sf := range p.Surfaces {
		if !sf.Visual() {
			continue
		}
		if len(h.Surfaces) > 0 && !contains(h.Surfaces, sf.ID) {
			continue
		}
		surf = append(surf, sf)
	}
	for _, want := range h.Surfaces {
		if _, ok := p.Surface(want); !ok {
			return fmt.Errorf("%w: surfaces: profile %s has no surface %q", ErrBadHello, p.ID, want)
		}
	}
	s.devMu.Lock()
	defer s.devMu.Unlock()
	d := &device{profile: p, surfaces: surf, region: h.Region}
	if old := s.dev.Load(); old != nil && h.Region == "" {
		d.region = old.region
	}
	s.dev.Store(d)
	return nil
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// surfaceKind is the kind of the main surface, for the disclosure wording.
func (d *device) surfaceKind() safety.SurfaceKind {
	if len(d.surfaces) > 0 {
		return safety.SurfaceKind(d.surfaces[0].Kind)
	}
	return safety.SurfaceVoice
}
