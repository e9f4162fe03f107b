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

// frameHist is the name of the gateway's per-frame processing histogram.
const frameHist = "vera_voice_frame_seconds"

// scrape is one read of the gateway's /metrics (text exposition format).
type scrape struct {
	at         time.Time
	cpu        float64 // process_cpu_seconds_total
	rss        float64 // process_resident_memory_bytes
	goroutines float64 // go_goroutines
	sessions   float64 // vera_voice_sessions
	buckets    map[float64]float64
	count      float64
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
	s := &scrape{at: at, cpu: math.NaN(), rss: math.NaN(), goroutines: math.NaN(), sessions: math.NaN(), count: math.NaN(), buckets: map[float64]float64{}}
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
		case frameHist + "_bucket":
			le, ok := labelValue(labels, "le")
			if !ok {
				continue
			}
			b, err := strconv.ParseFloat(le, 64) // "+Inf" parses as +Inf
			if err != nil {
				continue
			}
			s.buckets[b] = v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return s, nil
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
	if a == nil || b == nil || len(b.buckets) == 0 {
		return math.NaN(), 0
	}
	les := make([]float64, 0, len(b.buckets))
	for le := range b.buckets {
		les = append(les, le)
	}
	slices.Sort(les)
	cum := make([]float64, len(les))
	for i, le := range les {
		cum[i] = b.buckets[le] - a.buckets[le]
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
func lastFinite(s *scrape) float64 {
	top := math.Inf(-1)
	for le := range s.buckets {
		if !math.IsInf(le, 1) && le > top {
			top = le
		}
	}
	return top
}
