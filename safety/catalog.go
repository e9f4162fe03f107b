package safety

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

//go:embed catalog.json
var catalogJSON []byte

// Kinds of catalog entries. Select orders a region's card by kind.
const (
	KindCrisisLine  = "crisis_line"
	KindTextLine    = "text_line"
	KindSpecialised = "specialised"
	KindDirectory   = "directory"
	KindEmergency   = "emergency"
)

// Catalog entry statuses. Only verified entries are served unless the
// catalog is parsed with includeUnverified.
const (
	StatusVerified   = "verified"
	StatusUnverified = "unverified"
)

// RegionAny in an entry's regions means the entry serves every region (the
// international directory and the "call your local emergency number" entry).
const RegionAny = "*"

// catalogEntry is one resource as stored in catalog.json: the canonical
// Resource plus the catalog's own bookkeeping, which never leaves the package.
type catalogEntry struct {
	Resource
	Regions  []string `json:"regions"`
	Kind     string   `json:"kind"`
	Status   string   `json:"status"`
	Evidence string   `json:"evidence"`
}

type catalogFile struct {
	Version   string         `json:"version"`
	Notes     string         `json:"notes"`
	Resources []catalogEntry `json:"resources"`
}

// Catalog is an immutable, validated set of help resources by region. It is
// safe for concurrent use; every method returns copies.
type Catalog struct {
	version    string
	entries    []catalogEntry // served entries, file order
	excluded   []string       // ids of unverified entries left out
	byID       map[string]int
	anyDir     []int // RegionAny directory entries
	anyEmerg   []int // RegionAny emergency entries
	regionSets map[string][]int
}

var defaultCatalog = sync.OnceValues(func() (*Catalog, error) {
	return ParseCatalog(catalogJSON, false)
})

// DefaultCatalog returns the embedded catalog with verified entries only. It
// is parsed once; the embedded file is validated by the package tests, so an
// error here means a broken build.
func DefaultCatalog() (*Catalog, error) { return defaultCatalog() }

// EmbeddedCatalog parses the embedded catalog, optionally including entries
// whose facts are not yet verified (for reviewing the dataset, never for
// production cards).
func EmbeddedCatalog(includeUnverified bool) (*Catalog, error) {
	return ParseCatalog(catalogJSON, includeUnverified)
}

// ParseCatalog decodes and validates a catalog in the catalog.json format.
// Every entry must be well formed even when it is excluded; a verified entry
// needs a source_url and a verified_at date; every action needs its
// pre-stored spoken form; and the catalog must hold a verified international
// directory and a verified generic emergency entry so no card is ever empty.
func ParseCatalog(data []byte, includeUnverified bool) (*Catalog, error) {
	var f catalogFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("safety: catalog: decode: %w: %w", err, ErrCatalog)
	}
	c := &Catalog{version: f.Version, byID: map[string]int{}, regionSets: map[string][]int{}}
	seen := map[string]bool{}
	for i, e := range f.Resources {
		if err := validateEntry(e); err != nil {
			return nil, fmt.Errorf("safety: catalog: resources[%d] (%q): %w", i, e.ID, err)
		}
		if seen[e.ID] {
			return nil, fmt.Errorf("safety: catalog: resources[%d]: duplicate id %q: %w", i, e.ID, ErrCatalog)
		}
		seen[e.ID] = true
		if e.Status != StatusVerified && !includeUnverified {
			c.excluded = append(c.excluded, e.ID)
			continue
		}
		idx := len(c.entries)
		c.entries = append(c.entries, e)
		c.byID[e.ID] = idx
		for _, r := range e.Regions {
			if r == RegionAny {
				switch e.Kind {
				case KindDirectory:
					c.anyDir = append(c.anyDir, idx)
				case KindEmergency:
					c.anyEmerg = append(c.anyEmerg, idx)
				}
				continue
			}
			c.regionSets[r] = append(c.regionSets[r], idx)
		}
	}
	if len(c.anyDir) == 0 {
		return nil, fmt.Errorf("safety: catalog: no international directory entry: %w", ErrCatalog)
	}
	if len(c.anyEmerg) == 0 {
		return nil, fmt.Errorf("safety: catalog: no generic emergency entry: %w", ErrCatalog)
	}
	return c, nil
}

func validateEntry(e catalogEntry) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf(format+": %w", append(a, ErrCatalog)...)
	}
	if !isSlug(e.ID) {
		return bad("id: must be a lower-case slug")
	}
	if strings.TrimSpace(e.Name) == "" {
		return bad("name: empty")
	}
	switch e.Kind {
	case KindCrisisLine, KindTextLine, KindSpecialised, KindDirectory, KindEmergency:
	default:
		return bad("kind: %q not one of crisis_line, text_line, specialised, directory, emergency", e.Kind)
	}
	switch e.Status {
	case StatusVerified:
		if !strings.HasPrefix(e.SourceURL, "https://") {
			return bad("source_url: verified entry needs an https source")
		}
		if _, err := time.Parse(time.DateOnly, e.VerifiedAt); err != nil {
			return bad("verified_at: %q is not a YYYY-MM-DD date", e.VerifiedAt)
		}
	case StatusUnverified:
	default:
		return bad("status: %q not verified or unverified", e.Status)
	}
	if len(e.Regions) == 0 {
		return bad("regions: empty")
	}
	for _, r := range e.Regions {
		if r != RegionAny && (normRegion(r) != r) {
			return bad("regions: %q is not an upper-case ISO 3166-1 alpha-2 code or *", r)
		}
	}
	if e.Country != "" && normRegion(e.Country) != e.Country {
		return bad("country: %q is not an upper-case ISO 3166-1 alpha-2 code", e.Country)
	}
	if len(e.Actions) == 0 && (e.Kind != KindEmergency || strings.TrimSpace(e.Description) == "") {
		return bad("actions: only a generic emergency entry with a description may have none")
	}
	for j, a := range e.Actions {
		switch a.Type {
		case ActionCall, ActionText, ActionChat, ActionURL:
		default:
			return bad("actions[%d].type: %q not call, text, chat or url", j, a.Type)
		}
		if strings.TrimSpace(a.Value) == "" {
			return bad("actions[%d].value: empty", j)
		}
		if strings.TrimSpace(a.Spoken) == "" {
			return bad("actions[%d].spoken: missing pre-stored spoken form", j)
		}
	}
	return nil
}

func isSlug(s string) bool {
	if s == "" || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '-') {
			return false
		}
	}
	return true
}

// Version is the catalog's dataset version.
func (c *Catalog) Version() string { return c.version }

// All returns every served entry in catalog order.
func (c *Catalog) All() []Resource {
	out := make([]Resource, len(c.entries))
	for i, e := range c.entries {
		out[i] = e.Resource.clone()
	}
	return out
}

// Excluded returns the ids of unverified entries this catalog leaves out.
func (c *Catalog) Excluded() []string { return append([]string(nil), c.excluded...) }

// Lookup returns the served entry with the given id.
func (c *Catalog) Lookup(id string) (Resource, bool) {
	i, ok := c.byID[id]
	if !ok {
		return Resource{}, false
	}
	return c.entries[i].Resource.clone(), true
}

// IsEmergency reports whether id names an emergency-services entry (shown
// first on a crisis card, last otherwise).
func (c *Catalog) IsEmergency(id string) bool {
	i, ok := c.byID[id]
	return ok && c.entries[i].Kind == KindEmergency
}

// Regions returns the sorted regions that have entries of their own.
func (c *Catalog) Regions() []string {
	out := make([]string, 0, len(c.regionSets))
	for r := range c.regionSets {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// RegionPrefs are the region signals for choosing resources, strongest
// first: the engine's choice, the user's setting, the device or SIM country,
// the device locale (BCP 47 or POSIX, e.g. "en-GB", "fr_CA.UTF-8"), then the
// deployment default. Empty or malformed values are skipped.
type RegionPrefs struct {
	Engine, User, Device, Locale, Default string
}

// Region returns the region the preferences choose (upper-case ISO 3166-1
// alpha-2, "UK" read as "GB"), or "" when none of them names one.
func (p RegionPrefs) Region() string {
	for _, s := range []string{normRegion(p.Engine), normRegion(p.User), normRegion(p.Device), localeRegion(p.Locale), normRegion(p.Default)} {
		if s != "" {
			return s
		}
	}
	return ""
}

// Select chooses the region (see RegionPrefs.Region) and returns its
// resources in card order: the region's crisis and text lines in catalog
// order, then the international directory, then emergency services (the
// region's own number if the catalog has a verified one, else "call your
// local emergency number"). A region without entries of its own, or no
// region at all, gets the directory and the generic emergency entry. The list
// is never empty.
func (c *Catalog) Select(p RegionPrefs) (region string, rs []Resource) {
	region = p.Region()
	var lines, emerg []Resource
	for _, i := range c.regionSets[region] {
		e := c.entries[i]
		if e.Kind == KindEmergency {
			emerg = append(emerg, e.Resource.clone())
			continue
		}
		lines = append(lines, e.Resource.clone())
	}
	rs = lines
	for _, i := range c.anyDir {
		rs = append(rs, c.entries[i].Resource.clone())
	}
	if len(emerg) == 0 {
		for _, i := range c.anyEmerg {
			emerg = append(emerg, c.entries[i].Resource.clone())
		}
	}
	return region, append(rs, emerg...)
}

// normRegion upper-cases a two-letter country code and maps the common "UK"
// to ISO "GB"; anything else returns "".
func normRegion(s string) string {
	s = strings.TrimSpace(s)
	if len(s) != 2 {
		return ""
	}
	b := []byte{s[0] &^ 0x20, s[1] &^ 0x20}
	if b[0] < 'A' || b[0] > 'Z' || b[1] < 'A' || b[1] > 'Z' {
		return ""
	}
	if string(b) == "UK" {
		return "GB"
	}
	return string(b)
}

// localeRegion extracts the region subtag of a BCP 47 or POSIX locale
// ("en-GB", "en_GB.UTF-8", "zh-Hant-TW"); numeric regions ("es-419") and
// bare languages ("en") have none.
func localeRegion(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, ".@"); i >= 0 {
		s = s[:i]
	}
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == '_' })
	for _, p := range parts[min(1, len(parts)):] {
		if r := normRegion(p); r != "" {
			return r
		}
	}
	return ""
}

// clone deep-copies a resource so callers can never mutate catalog data.
// Nil stays nil and empty stays empty, so the JSON of a clone is identical.
func (r Resource) clone() Resource {
	if r.Languages != nil {
		r.Languages = append(make([]string, 0, len(r.Languages)), r.Languages...)
	}
	if r.Actions != nil {
		r.Actions = append(make([]Action, 0, len(r.Actions)), r.Actions...)
	}
	return r
}
