package safety

import (
	"sort"
	"sync"
)

// SurfaceKind is the kind of surface a card reaches the person on; it
// matches the devices package's surface kinds.
type SurfaceKind string

const (
	SurfaceHUD    SurfaceKind = "hud"
	SurfaceScreen SurfaceKind = "screen"
	SurfaceVoice  SurfaceKind = "voice"
)

// Referral events counted by Counters.
const (
	EventShown  = "shown"
	EventAcked  = "acked"
	EventSpoken = "spoken"
)

// CounterSink receives every count Counters makes, with its labels
// already bounded (see Counters). The gateway backs it with Prometheus
// counters, vera_safety_cards_{shown,acked,spoken}_total
// (gateway.SafetyCounters); the safety package itself stays free of
// anything networked.
type CounterSink interface {
	// Inc counts one event (EventShown, EventAcked or EventSpoken).
	Inc(event, level, region, surface string)
}

// Counters counts referral notifications actually issued — safety cards
// shown, acknowledged and spoken — by level, region and surface, into a
// CounterSink and as an in-process snapshot for the audit endpoint (CA SB
// 243 §22603 asks for the number of referral notifications; WA and OR for
// public counts).
//
// Counters carry no text and no identifiers: labels are the level name, an
// ISO country code (anything else becomes "unknown") and a surface kind
// (anything else becomes "other"), so cardinality is bounded. A nil
// *Counters is valid and counts nothing.
type Counters struct {
	sink CounterSink // nil: the snapshot only

	mu     sync.Mutex // guards counts
	counts map[counterKey]uint64
}

type counterKey struct{ event, level, region, surface string }

// NewCounters returns counters that also count into sink (nil: the
// snapshot only).
func NewCounters(sink CounterSink) *Counters {
	return &Counters{sink: sink, counts: map[counterKey]uint64{}}
}

// CardShown counts one safety card shown on a surface.
func (c *Counters) CardShown(level Level, region string, surface SurfaceKind) {
	c.inc(EventShown, level, region, surface)
}

// CardAcked counts one safety card the person acknowledged.
func (c *Counters) CardAcked(level Level, region string, surface SurfaceKind) {
	c.inc(EventAcked, level, region, surface)
}

// CardSpoken counts one safety card whose resources were spoken.
func (c *Counters) CardSpoken(level Level, region string, surface SurfaceKind) {
	c.inc(EventSpoken, level, region, surface)
}

func (c *Counters) inc(event string, level Level, region string, surface SurfaceKind) {
	if c == nil {
		return
	}
	k := counterKey{event: event, level: levelLabel(level), region: regionLabel(region), surface: surfaceLabel(surface)}
	if c.sink != nil {
		c.sink.Inc(k.event, k.level, k.region, k.surface)
	}
	c.mu.Lock()
	c.counts[k]++
	c.mu.Unlock()
}

func levelLabel(l Level) string {
	if !l.Valid() {
		return "unknown"
	}
	return l.String()
}

func regionLabel(r string) string {
	if n := normRegion(r); n != "" {
		return n
	}
	return "unknown"
}

func surfaceLabel(s SurfaceKind) string {
	switch s {
	case SurfaceHUD, SurfaceScreen, SurfaceVoice:
		return string(s)
	}
	return "other"
}

// CounterRow is one non-zero counter in a snapshot.
type CounterRow struct {
	Event   string `json:"event"`
	Level   string `json:"level"`
	Region  string `json:"region"`
	Surface string `json:"surface"`
	Count   uint64 `json:"count"`
}

// CountersSnapshot is the audit view: every non-zero counter, sorted, and
// totals per event. It holds no text and no identifiers.
type CountersSnapshot struct {
	Rows   []CounterRow      `json:"rows"`
	Totals map[string]uint64 `json:"totals"`
}

// Snapshot returns the counts since this process started.
func (c *Counters) Snapshot() CountersSnapshot {
	s := CountersSnapshot{Rows: []CounterRow{}, Totals: map[string]uint64{EventShown: 0, EventAcked: 0, EventSpoken: 0}}
	if c == nil {
		return s
	}
	c.mu.Lock()
	for k, n := range c.counts {
		s.Rows = append(s.Rows, CounterRow{Event: k.event, Level: k.level, Region: k.region, Surface: k.surface, Count: n})
		s.Totals[k.event] += n
	}
	c.mu.Unlock()
	sort.Slice(s.Rows, func(i, j int) bool {
		a, b := s.Rows[i], s.Rows[j]
		if a.Event != b.Event {
			return a.Event < b.Event
		}
		if a.Level != b.Level {
			return a.Level < b.Level
		}
		if a.Region != b.Region {
			return a.Region < b.Region
		}
		return a.Surface < b.Surface
	})
	return s
}
