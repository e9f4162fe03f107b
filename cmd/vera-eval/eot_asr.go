package main

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/veraneural/vera-gateway/audio"
	"github.com/veraneural/vera-gateway/audio/pipeline"
	"github.com/veraneural/vera-gateway/audio/turn"
	"github.com/veraneural/vera-gateway/gateway/router/sphinx"
)

// partialEvery is the recogniser's partial cadence: the router's
// pocketsphinx provider takes a hypothesis every 200 ms of audio.
const partialEvery = 200 * msSamples

// recogniser transcribes streams the way the voice session's listen slot
// does: 20 ms frames as they come, a partial every partialEvery samples.
type recogniser struct {
	pool  *sphinx.Pool
	cfg   sphinx.Config
	lag   int64  // samples between a partial's audio and its arrival
	cache string // directory of earlier transcriptions ("": none)
	// flush: also take a hypothesis where the voice session asks for one,
	// once a pause has lasted turn.WordsSettleSamples (flushPoints).
	flush bool
}

// flushVersion names how flushPoints finds the pauses (part of the cache
// key).
const flushVersion = "vad1"

// flushPoints returns the sample times (ends of 20 ms frames) at which the
// live voice session asks the recogniser for a hypothesis now: the frame at
// which the turn detector's pause in progress reaches
// turn.WordsSettleSamples of silence (gateway/voice: maybePartial). The
// pauses are the real inbound pipeline's (VAD and detector) over pcm, with
// a turn that never ends on silence, as the recogniser hears pcm whole.
func flushPoints(pcm []int16) ([]int64, error) {
	pc := pipeline.DefaultConfig()
	pc.EchoGuard = false
	pc.Turn.SilenceDurationMs, pc.Turn.MaxSilenceMs, pc.Turn.MaxTurnMs = 10000, 10000, 600000
	in, err := pipeline.New(pc)
	if err != nil {
		return nil, err
	}
	var out []int64
	asked := false
	for k := 0; k+audio.Frame20 <= len(pcm); k += audio.Frame20 {
		in.Analyse(pcm[k:k+audio.Frame20], int64(k), false, func(*turn.Event) {})
		sil := in.Turn().PauseSilence()
		switch {
		case sil == 0:
			asked = false
		case !asked && sil >= turn.WordsSettleSamples:
			asked = true
			out = append(out, int64(k+audio.Frame20))
		}
	}
	return out, nil
}

func newRecogniser(lagMs, decoders int, cache string, flush bool) (*recogniser, error) {
	cfg := sphinx.DefaultConfig()
	cfg.Pool = max(decoders, 1)
	pool, err := sphinx.NewPool(cfg)
	if err != nil {
		return nil, err
	}
	if cache != "" {
		if err := os.MkdirAll(cache, 0o755); err != nil {
			cache = ""
		}
	}
	return &recogniser{pool: pool, cfg: cfg, lag: int64(lagMs * msSamples), cache: cache, flush: flush}, nil
}

// cacheKey names a transcription by everything that decides it: the
// audio, the cadence, the lag and the models.
func (r *recogniser) cacheKey(pcm []int16) string {
	h := sha256.New()
	_ = binary.Write(h, binary.LittleEndian, pcm)
	fmt.Fprintf(h, "|%d|%d|%s|%s|%s", partialEvery, r.lag, r.cfg.HMM, r.cfg.Dict, r.cfg.LM)
	if r.flush {
		fmt.Fprintf(h, "|flush%d|%s", turn.WordsSettleSamples, flushVersion)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

type cachedPartial struct {
	At   int64  `json:"at"`
	Text string `json:"text"`
}

// cached transcribes pcm, or reads the earlier transcription of the same
// audio from the cache.
func (r *recogniser) cached(pcm []int16) ([]partial, error) {
	if r.cache == "" {
		return r.partials(pcm)
	}
	path := filepath.Join(r.cache, r.cacheKey(pcm)+".json")
	if b, err := os.ReadFile(path); err == nil {
		var cp []cachedPartial
		if json.Unmarshal(b, &cp) == nil {
			out := make([]partial, len(cp))
			for i, c := range cp {
				out[i] = partial{c.At, c.Text, c.At - r.lag}
			}
			return out, nil
		}
	}
	out, err := r.partials(pcm)
	if err != nil {
		return nil, err
	}
	cp := make([]cachedPartial, len(out))
	for i, p := range out {
		cp[i] = cachedPartial{p.at, p.text}
	}
	if b, err := json.Marshal(cp); err == nil {
		_ = os.WriteFile(path, b, 0o644)
	}
	return out, nil
}

func (r *recogniser) close() { _ = r.pool.Close() }

// partials transcribes pcm from its start and returns each partial with
// the sample time it arrives (heard up to at − lag).
func (r *recogniser) partials(pcm []int16) ([]partial, error) {
	d, err := r.pool.Acquire(context.Background())
	if err != nil {
		return nil, err
	}
	defer r.pool.Release(d)
	if err := d.Start(sphinx.SearchLM); err != nil {
		return nil, err
	}
	var flushes []int64
	if r.flush {
		if flushes, err = flushPoints(pcm); err != nil {
			return nil, err
		}
	}
	var out []partial
	since := int64(0)
	for k := 0; k+audio.Frame20 <= len(pcm); k += audio.Frame20 {
		if err := d.Process(pcm[k : k+audio.Frame20]); err != nil {
			return nil, err
		}
		heard := int64(k + audio.Frame20)
		since += audio.Frame20
		if since >= partialEvery {
			since = 0
			out = append(out, partial{at: heard + r.lag, text: d.Hypothesis(), heard: heard})
		} else if len(flushes) > 0 && flushes[0] == heard {
			// A hypothesis now: the periodic cadence goes on unchanged
			// (gateway/router's sphinx stream).
			out = append(out, partial{at: heard + r.lag, text: d.Hypothesis(), heard: heard})
		}
		for len(flushes) > 0 && flushes[0] <= heard {
			flushes = flushes[1:]
		}
	}
	d.Abort()
	return out, nil
}

// transcribeAll runs partials on every input with up to workers at once.
func (r *recogniser) transcribeAll(inputs [][]int16, workers int) ([][]partial, error) {
	out := make([][]partial, len(inputs))
	errs := make([]error, len(inputs))
	sem := make(chan struct{}, max(workers, 1))
	var wg sync.WaitGroup
	for i, pcm := range inputs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i], errs[i] = r.cached(pcm)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("recogniser, input %d: %w", i, err)
		}
	}
	return out, nil
}
