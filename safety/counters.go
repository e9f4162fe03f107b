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
//
// Each partner files its own referral report: Partner returns the view a
// partner's sessions count through, and SnapshotFor reads one partner's
// counts only. The sink gets the deployment's totals, with no partner
// label.
type Counters struct {
	sink CounterSink // nil: the snapshot only
	// partner is the partner this view counts for; root holds the counts
	// of every view (itself for the root).
	partner string
	root    *Counters

	mu      sync.Mutex // guards counts and onCount (of the root)
	counts  map[counterKey]uint64
	onCount func(partner string, row CounterRow)
}

type counterKey struct{ partner, event, level, region, surface string }

// NewCounters returns counters that also count into sink (nil: the
// snapshot only).
func NewCounters(sink CounterSink) *Counters {
	c := &Counters{sink: sink, counts: map[counterKey]uint64{}}
	c.root = c
	return c
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

// Partner returns the counters partner's sessions count through: they
// add to the deployment's totals and to partner's own report. A nil
// *Counters returns nil.
func (c *Counters) Partner(id string) *Counters {
	if c == nil {
		return nil
	}
	return &Counters{sink: c.sink, partner: id, root: c.root}
}

// OnCount hands every count to f as well (partner, and a row of Count 1),
// so that a deployment of several gateways can add them up in a shared
// store. f must not block: it runs on the path that shows the card.
func (c *Counters) OnCount(f func(partner string, row CounterRow)) {
	if c == nil {
		return
	}
	c.root.mu.Lock()
	c.root.onCount = f
	c.root.mu.Unlock()
}

func (c *Counters) inc(event string, level Level, region string, surface SurfaceKind) {
	if c == nil {
		return
	}
	k := counterKey{partner: c.partner, event: event, level: levelLabel(level), region: regionLabel(region), surface: surfaceLabel(surface)}
	if c.sink != nil {
		c.sink.Inc(k.event, k.level, k.region, k.surface)
	}
	r := c.root
	r.mu.Lock()
	r.counts[k]++
	onCount := r.onCount
	r.mu.Unlock()
	if onCount != nil {
		onCount(k.partner, CounterRow{Event: k.event, Level: k.level, Region: k.region, Surface: k.surface, Count: 1})
	}
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

// Snapshot returns the counts since this process started: the
// deployment's, over every partner.
func (c *Counters) Snapshot() CountersSnapshot { return c.snapshot(func(string) bool { return true }) }

// SnapshotFor returns partner's own counts: the referral report that
// partner files. Another partner's cards never appear in it.
func (c *Counters) SnapshotFor(partner string) CountersSnapshot {
	return c.snapshot(func(p string) bool { return p == partner })
}

func (c *Counters) snapshot(keep func(partner string) bool) CountersSnapshot {
	s := CountersSnapshot{Rows: []CounterRow{}, Totals: map[string]uint64{EventShown: 0, EventAcked: 0, EventSpoken: 0}}
	if c == nil {
		return s
	}
	r := c.root
	merged := map[counterKey]uint64{}
	r.mu.Lock()
	for k, n := range r.counts {
		if keep(k.partner) {
			k.partner = ""
			merged[k] += n
		}
	}
	r.mu.Unlock()
	rows := make([]CounterRow, 0, len(merged))
	for k, n := range merged {
		rows = append(rows, CounterRow{Event: k.event, Level: k.level, Region: k.region, Surface: k.surface, Count: n})
	}
	return SnapshotOf(rows)
}

// SnapshotOf sorts rows (one per event, level, region and surface) into a
// snapshot with its totals.
func SnapshotOf(rows []CounterRow) CountersSnapshot {
	s := CountersSnapshot{Rows: rows, Totals: map[string]uint64{EventShown: 0, EventAcked: 0, EventSpoken: 0}}
	if s.Rows == nil {
		s.Rows = []CounterRow{}
	}
	for _, r := range rows {
		s.Totals[r.Event] += r.Count
	}
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
