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
}

func newRecogniser(lagMs, decoders int, cache string) (*recogniser, error) {
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
	return &recogniser{pool: pool, cfg: cfg, lag: int64(lagMs * msSamples), cache: cache}, nil
}

// cacheKey names a transcription by everything that decides it: the
// audio, the cadence, the lag and the models.
func (r *recogniser) cacheKey(pcm []int16) string {
	h := sha256.New()
	_ = binary.Write(h, binary.LittleEndian, pcm)
	fmt.Fprintf(h, "|%d|%d|%s|%s|%s", partialEvery, r.lag, r.cfg.HMM, r.cfg.Dict, r.cfg.LM)
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
	var out []partial
	since := int64(0)
	for k := 0; k+audio.Frame20 <= len(pcm); k += audio.Frame20 {
		if err := d.Process(pcm[k : k+audio.Frame20]); err != nil {
			return nil, err
		}
		since += audio.Frame20
		if since >= partialEvery {
			since = 0
			out = append(out, partial{at: int64(k+audio.Frame20) + r.lag, text: d.Hypothesis(), heard: int64(k + audio.Frame20)})
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
