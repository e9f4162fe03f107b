package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Gateway series the load report reads besides the process ones.
const (
	frameHist       = "vera_voice_frame_seconds"               // per inbound frame
	setupHist       = "vera_voice_session_setup_seconds"       // offer → ready
	listenWaitHist  = "vera_voice_listen_wait_seconds"         // turn → recogniser open
	setupFailed     = "vera_voice_sessions_setup_failed_total" // closed before ready
	playoutFrames   = "vera_voice_playout_frames_total"        // {source="encoded"|"cached"}
	frameOverruns   = "vera_voice_frame_overruns_total"        // frames handled a period or more late
	listenBusy      = "vera_voice_listen_busy_total"           // turns answered busy: no recogniser in time
	finalLate       = "vera_voice_final_late_total"            // turns answered busy: final not ready in time
	turnSegmentHist = "vera_voice_turn_segment_seconds"        // {segment=…}
)

// scrapeFakes reads the fake providers' /metrics (nil when base is "" or
// the read fails: the report then has no fakes figure).
func scrapeFakes(hc *http.Client, base string) *scrape {
	if base == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := scrapeMetrics(ctx, hc, strings.TrimRight(base, "/")+"/metrics")
	if err != nil {
		return nil
	}
	return s
}

// scrape is one read of the gateway's /metrics (text exposition format).
type scrape struct {
	at         time.Time
	cpu        float64             // process_cpu_seconds_total
	rss        float64             // process_resident_memory_bytes
	goroutines float64             // go_goroutines
	sessions   float64             // vera_voice_sessions
	buckets    map[float64]float64 // frameHist's
	count      float64
	// hists holds every vera_ histogram's cumulative buckets by name and
	// its labels other than le (`vera_voice_turn_segment_seconds{segment="llm_ttft"}`;
	// the bare name when it has none); values every other vera_ sample by
	// name and labels as exposed (e.g. `vera_voice_playout_frames_total{source="cached"}`).
	hists  map[string]map[float64]float64
	values map[string]float64
}

// value is the sample of name with labels ("" for none), NaN when absent.
func (s *scrape) value(series string) float64 {
	if v, ok := s.values[series]; ok {
		return v
	}
	return math.NaN()
}

// metricsURL is the /metrics of the gateway that serves sessionsURL.
func metricsURL(sessionsURL string) (string, error) {
	u, err := url.Parse(sessionsURL)
	if err != nil {
		return "", err
	}
	u.Path, u.RawQuery = "/metrics", ""
	return u.String(), nil
}

func scrapeMetrics(ctx context.Context, hc *http.Client, u string) (*scrape, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("metrics: %s: HTTP %d", u, resp.StatusCode)
	}
	return parseMetrics(resp.Body, time.Now())
}

// parseMetrics reads the few series the load report needs; others are
// skipped. Missing series stay NaN so the report can say "not exported".
func parseMetrics(r io.Reader, at time.Time) (*scrape, error) {
	s := &scrape{at: at, cpu: math.NaN(), rss: math.NaN(), goroutines: math.NaN(), sessions: math.NaN(), count: math.NaN(),
		hists: map[string]map[float64]float64{}, values: map[string]float64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		if sp < 0 {
			continue
		}
		name, val := line[:sp], line[sp+1:]
		v, err := strconv.ParseFloat(val, 64)
		if err != nil {
			continue
		}
		labels := ""
		if i := strings.IndexByte(name, '{'); i >= 0 {
			name, labels = name[:i], name[i:]
		}
		switch name {
		case "process_cpu_seconds_total":
			s.cpu = v
		case "process_resident_memory_bytes":
			s.rss = v
		case "go_goroutines":
			s.goroutines = v
		case "vera_voice_sessions":
			s.sessions = v
		case frameHist + "_count":
			s.count = v
		}
		if !strings.HasPrefix(name, "vera_") {
			continue
		}
		if base, ok := strings.CutSuffix(name, "_bucket"); ok {
			le, ok := labelValue(labels, "le")
			if !ok {
				continue
			}
			b, err := strconv.ParseFloat(le, 64) // "+Inf" parses as +Inf
			if err != nil {
				continue
			}
			key := base + withoutLabel(labels, "le")
			h := s.hists[key]
			if h == nil {
				h = map[float64]float64{}
				s.hists[key] = h
			}
			h[b] = v
			continue
		}
		s.values[name+labels] = v
	}
	s.buckets = s.hists[frameHist]
	if s.buckets == nil {
		s.buckets = map[float64]float64{}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return s, nil
}

// withoutLabel is labels ({a="1",le="0.5"}) without key, "" when none
// are left. Label values are ours: no commas or quotes inside them.
func withoutLabel(labels, key string) string {
	inner := strings.TrimSuffix(strings.TrimPrefix(labels, "{"), "}")
	var keep []string
	for _, kv := range strings.Split(inner, ",") {
		if kv != "" && !strings.HasPrefix(kv, key+"=") {
			keep = append(keep, kv)
		}
	}
	if len(keep) == 0 {
		return ""
	}
	return "{" + strings.Join(keep, ",") + "}"
}

func labelValue(labels, key string) (string, bool) {
	_, rest, ok := strings.Cut(labels, key+`="`)
	if !ok {
		return "", false
	}
	v, _, ok := strings.Cut(rest, `"`)
	return v, ok
}

// histQuantile is q of the histogram delta b−a (cumulative buckets), with
// linear interpolation inside the bucket as Prometheus' histogram_quantile
// does. The second result is the number of observations in the delta.
func histQuantile(a, b *scrape, q float64) (float64, float64) {
	if a == nil || b == nil {
		return math.NaN(), 0
	}
	return bucketQuantile(a.buckets, b.buckets, q)
}

// bucketQuantile is histQuantile over two reads of one histogram's buckets.
func bucketQuantile(a, b map[float64]float64, q float64) (float64, float64) {
	if len(b) == 0 {
		return math.NaN(), 0
	}
	les := make([]float64, 0, len(b))
	for le := range b {
		les = append(les, le)
	}
	slices.Sort(les)
	cum := make([]float64, len(les))
	for i, le := range les {
		cum[i] = b[le] - a[le]
	}
	total := cum[len(cum)-1]
	if total <= 0 {
		return math.NaN(), 0
	}
	rank := q * total
	prevLe, prevCum := 0.0, 0.0
	for i, le := range les {
		if cum[i] >= rank {
			if math.IsInf(le, 1) {
				return prevLe, total // above the last finite bucket: its bound is a floor
			}
			if cum[i] == prevCum {
				return le, total
			}
			return prevLe + (le-prevLe)*(rank-prevCum)/(cum[i]-prevCum), total
		}
		prevLe, prevCum = le, cum[i]
	}
	return prevLe, total
}

// lastFinite is the largest finite bucket bound of the frame histogram.
func lastFinite(s *scrape) float64 { return topBucket(s.buckets) }

func topBucket(b map[float64]float64) float64 {
	top := math.Inf(-1)
	for le := range b {
		if !math.IsInf(le, 1) && le > top {
			top = le
		}
	}
	return top
}

// histDist is a gateway histogram's quantiles over two reads, in ms.
type histDist struct {
	N   float64  `json:"n"`
	P50 *float64 `json:"p50"`
	P95 *float64 `json:"p95"`
	P99 *float64 `json:"p99"`
	// Overflow: p99 is past the last finite bucket, so P99 is a lower bound.
	Overflow bool `json:"overflow,omitempty"`
}

// histMs summarises histogram name between reads a and b (nil-safe).
func histMs(a, b *scrape, name string) histDist {
	if a == nil || b == nil {
		return histDist{}
	}
	ha, hb := a.hists[name], b.hists[name]
	p50, n := bucketQuantile(ha, hb, 0.50)
	if n == 0 {
		return histDist{}
	}
	p95, _ := bucketQuantile(ha, hb, 0.95)
	p99, _ := bucketQuantile(ha, hb, 0.99)
	return histDist{N: n, P50: ptr(p50 * 1000), P95: ptr(p95 * 1000), P99: ptr(p99 * 1000), Overflow: p99 >= topBucket(hb)}
}

// delta is series' increase between reads a and b (nil when either lacks it).
func delta(a, b *scrape, series string) *float64 {
	if a == nil || b == nil {
		return nil
	}
	return ptr(b.value(series) - a.value(series))
}

// scrapeAll reads the gateway's /metrics and the fakes' report at one
// moment (a window's edge), within 5 s.
func scrapeAll(hc *http.Client, murl, fakesURL string) (gw, fakes *scrape, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	gw, err = scrapeMetrics(ctx, hc, murl)
	return gw, scrapeFakes(hc, fakesURL), err
}
