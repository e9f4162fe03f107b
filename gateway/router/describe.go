package router

import (
	"log/slog"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// slotOrder is the order slots are described in: the voice turn's path
// first, then the rest alphabetically.
var slotOrder = []string{SlotListen, SlotConverse, SlotSnappy, SlotEco, SlotSpeak, SlotSafety}

// LogValue describes what answers each slot, for the start-up log: one
// attribute per slot, its models in failover order, each as
// name (provider[ model][ at host]) — e.g.
// listen="embedded-listen (pocketsphinx en-us)". It names no credential
// and no URL path or userinfo.
func (r *Router) LogValue() slog.Value {
	var names []string
	for s := range r.slots {
		if !slices.Contains(slotOrder, s) {
			names = append(names, s)
		}
	}
	slices.Sort(names)
	var attrs []slog.Attr
	for _, s := range append(slices.Clone(slotOrder), names...) {
		ms := r.slots[s]
		if len(ms) == 0 {
			continue
		}
		descs := make([]string, len(ms))
		for i, m := range ms {
			descs[i] = r.describe(m)
		}
		attrs = append(attrs, slog.String(s, strings.Join(descs, ", ")))
	}
	return slog.GroupValue(attrs...)
}

// describe is one model as LogValue shows it.
func (r *Router) describe(m *model) string {
	what := []string{m.cfg.Provider}
	switch m.cfg.Provider {
	case ProviderPocketsphinx:
		what = append(what, filepath.Base(r.cfg.Sphinx.HMM))
	case ProviderEspeak:
		voice := m.cfg.Voice
		if voice == "" {
			voice = r.cfg.Espeak.Voice
		}
		what = append(what, voice, strconv.Itoa(r.cfg.Espeak.WordsPerMinute)+" wpm")
	default:
		if m.cfg.Model != "" {
			what = append(what, m.cfg.Model)
		}
		if u, err := url.Parse(m.cfg.BaseURL); err == nil && u.Host != "" {
			what = append(what, "at "+u.Host)
		}
	}
	return m.cfg.Name + " (" + strings.Join(what, " ") + ")"
}
