package voice

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/veraneural/vera-gateway/gateway/router"
	"github.com/veraneural/vera-gateway/gateway/rtc"
)

// maxPhraseSamples bounds one cached phrase (60 s at 16 kHz): a longer text
// is spoken the ordinary way, per session.
const maxPhraseSamples = 60 * rtc.PCMRate

// errPhraseTooLong: the phrase is longer than maxPhraseSamples.
var errPhraseTooLong = errors.New("voice: phrase too long to cache")

// phrase is a fixed text synthesised and Opus-encoded once. Every field is
// read-only after the phrase is published: sessions share it.
type phrase struct {
	text   string
	frames [][]byte // 20 ms Opus packets (rtc.EncodePCM)
	pcm    []int16  // the same audio at 16 kHz: the echo guard's reference
}

// phraseKey names a phrase: the text and the encoder settings. The voice is
// the factory's speaker, the same for every key of one cache.
type phraseKey struct {
	text   string
	params rtc.EncoderParams
}

// phraseEntry is a cache slot; ready is closed when ph or err is set.
type phraseEntry struct {
	key   phraseKey
	ready chan struct{}
	ph    *phrase
	err   error
	elem  *list.Element // in lru once ready and ok
}

// phraseCache synthesises and encodes fixed phrases (the spoken AI
// disclosure) once and shares the encoded frames read-only across sessions,
// so a new session costs no espeak run and no Opus encoding for them. It
// holds at most max phrases, least recently used evicted. Concurrent first
// requests for one phrase synthesise it once: the first caller does the
// work on its own goroutine (no goroutine of the cache's), the others wait
// for it or for their own context. A failed or cancelled synthesis is not
// cached; the waiters then try again themselves.
type phraseCache struct {
	speaker Speaker
	max     int
	m       *Metrics

	mu      sync.Mutex // mu guards entries and lru
	entries map[phraseKey]*phraseEntry
	lru     *list.List // of *phraseEntry, most recent first; only ready, ok entries
}

func newPhraseCache(sp Speaker, max int, m *Metrics) *phraseCache {
	return &phraseCache{speaker: sp, max: max, m: m, entries: map[phraseKey]*phraseEntry{}, lru: list.New()}
}

// get returns the phrase for text encoded with params, synthesising it if
// no session has yet. It returns ctx's error when ctx ends while waiting.
func (c *phraseCache) get(ctx context.Context, text string, params rtc.EncoderParams) (*phrase, error) {
	return c.fetch(ctx, text, params, "hit", "miss")
}

// warm makes sure text encoded with params is cached, ahead of its first
// use; it counts as phrase_cache_total{result="warm"}, not as a hit or miss.
func (c *phraseCache) warm(ctx context.Context, text string, params rtc.EncoderParams) error {
	_, err := c.fetch(ctx, text, params, "warm", "warm")
	return err
}

// fetch is get, counting a cached phrase as hit and a synthesis as miss.
func (c *phraseCache) fetch(ctx context.Context, text string, params rtc.EncoderParams, hit, miss string) (*phrase, error) {
	key := phraseKey{text: text, params: params}
	for {
		c.mu.Lock()
		e, ok := c.entries[key]
		if ok {
			if e.elem != nil {
				c.lru.MoveToFront(e.elem)
			}
			c.mu.Unlock()
			select {
			case <-e.ready:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			switch {
			case e.err == nil:
				c.m.PhraseCache.WithLabelValues(hit).Inc()
				return e.ph, nil
			case !canceled(e.err):
				// A phrase that cannot be cached (too long, speaker error)
				// is not retried by every waiter in turn.
				return nil, e.err
			case ctx.Err() != nil:
				return nil, ctx.Err()
			}
			continue // the first caller went away: this one synthesises
		}
		e = &phraseEntry{key: key, ready: make(chan struct{})}
		c.entries[key] = e
		c.mu.Unlock()
		c.m.PhraseCache.WithLabelValues(miss).Inc()
		ph, err := c.synthesise(ctx, text, params)
		c.mu.Lock()
		e.ph, e.err = ph, err
		if err != nil {
			delete(c.entries, key)
		} else {
			e.elem = c.lru.PushFront(e)
			for c.lru.Len() > c.max {
				old := c.lru.Remove(c.lru.Back()).(*phraseEntry)
				delete(c.entries, old.key)
			}
		}
		close(e.ready)
		c.mu.Unlock()
		return ph, err
	}
}

func canceled(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// synthesise speaks text at 16 kHz and encodes it.
func (c *phraseCache) synthesise(ctx context.Context, text string, params rtc.EncoderParams) (*phrase, error) {
	start := time.Now()
	var pcm []int16
	_, err := c.speaker.Speak(ctx, router.SpeakRequest{Text: text, SampleRate: rtc.PCMRate, PCMOnly: true},
		func(ch router.AudioChunk) error {
			if ch.Codec != router.CodecPCM || ch.SampleRate != rtc.PCMRate {
				return fmt.Errorf("voice: speak returned %s at %d Hz, want PCM at %d", ch.Codec, ch.SampleRate, rtc.PCMRate)
			}
			if len(pcm)+len(ch.PCM) > maxPhraseSamples {
				return errPhraseTooLong
			}
			pcm = append(pcm, ch.PCM...)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("voice: phrase: %w", err)
	}
	if len(pcm) == 0 {
		return nil, errors.New("voice: phrase: the speaker returned no audio")
	}
	frames, err := rtc.EncodePCM(params, pcm)
	if err != nil {
		return nil, fmt.Errorf("voice: phrase: %w", err)
	}
	c.m.PhraseSynthesis.Observe(time.Since(start).Seconds())
	return &phrase{text: text, frames: frames, pcm: pcm[:len(pcm):len(pcm)]}, nil
}

// newPhraseSource is a speech source that plays ph's pre-encoded frames
// (rtc.OpusSource): one sentence of the AI disclosure, ph.text, which is
// not reply text and which the person may talk over. tap, if set, gets each
// frame's PCM as it goes out (the echo guard's reference, which the Sender
// taps only for PCM sources).
func newPhraseSource(ph *phrase, tap func(pcm []int16, ts uint32), m *Metrics) *speechSource {
	return &speechSource{
		played: make(chan struct{}),
		buf:    ph.pcm, // capped: write would copy, never touch the shared array
		done:   true,
		marks:  []mark{{text: ph.text, start: 0, end: len(ph.pcm), notice: true}},
		opus:   ph.frames,
		tap:    tap,
		counts: m,
	}
}
