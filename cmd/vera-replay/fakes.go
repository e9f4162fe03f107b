package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// fakePace is how the fake providers pace their answers. The defaults are
// in the range of hosted providers (research/voice-anchors.md: STT finals
// 0.35–2 s after the end of speech, first LLM token a few hundred ms,
// 30–60 tokens/s, TTS first byte ~0.1–0.3 s and faster than real time).
type fakePace struct {
	STTDelay   time.Duration // transcription: answer this long after the upload arrived
	TTFT       time.Duration // chat: first token
	TokenEvery time.Duration // chat: then one token (a word) every
	TTSTTFB    time.Duration // speech: first audio
	TTSSpeed   float64       // speech: then audio at this multiple of real time
}

func defaultPace() fakePace {
	return fakePace{STTDelay: 250 * time.Millisecond, TTFT: 350 * time.Millisecond, TokenEvery: 25 * time.Millisecond,
		TTSTTFB: 150 * time.Millisecond, TTSSpeed: 4}
}

// scaled multiplies every wait by f (0: answer at once, for tests).
func (p fakePace) scaled(f float64) fakePace {
	s := func(d time.Duration) time.Duration { return time.Duration(float64(d) * f) }
	p.STTDelay, p.TTFT, p.TokenEvery, p.TTSTTFB = s(p.STTDelay), s(p.TTFT), s(p.TokenEvery), s(p.TTSTTFB)
	if f == 0 {
		p.TTSSpeed = 0 // no pacing at all
	}
	return p
}

// Bounds of what the fakes accept: a request over them gets 413/400.
const (
	fakeMaxUpload   = 16 << 20 // a 30 s turn at 16 kHz is ~1 MB
	fakeMaxJSON     = 1 << 20
	fakeMaxSpeech   = 4096 // characters of input text
	fakeSpeechCache = 256  // synthesised texts kept
	fakeRate        = 24000
	fakeCharsPerSec = 15 // speaking rate of the synthetic voice
)

// fakeUtterances are what the fake recogniser hears: every turn with
// speech gets one of them, chosen by the amount of speech in it.
var fakeUtterances = []string{
	"I had a long day at work today.",
	"Can you tell me something nice about the weather?",
	"I am thinking about what to cook for dinner.",
	"My sister is coming to visit this weekend.",
	"I went for a walk in the park this morning.",
	"What should I read next?",
	"The train was late again this evening.",
}

// fakeReplies are the fake model's answers, chosen by the user's text:
// two short sentences, 2–4 s of speech.
var fakeReplies = []string{
	"That sounds like a lot. What was the hardest part?",
	"I hear you. Tell me a little more about it.",
	"That sounds lovely. How do you feel about it?",
	"Good question. Let us think it through together.",
	"I am glad you told me. What would help right now?",
	"That makes sense. What happened next?",
}

// fakeProviders is an OpenAI-compatible STT, chat and TTS server for
// talking-load runs: deterministic answers (a function of the request),
// realistic pacing, bounded inputs, loopback only. It runs in its own
// process (vera-replay -serve-fakes) so its CPU is counted apart from the
// gateway's; its /metrics has the process collector for that.
type fakeProviders struct {
	pace fakePace
	reg  *prometheus.Registry
	reqs *prometheus.CounterVec

	mu     sync.Mutex // guards speech
	speech map[string]*fakeSpeech
}

// fakeSpeech is one synthesised text, kept for reuse (replies repeat).
type fakeSpeech struct {
	pcm  []byte   // 24 kHz s16le
	opus [][]byte // the same audio, 20 ms Opus packets
}

func newFakeProviders(p fakePace) *fakeProviders {
	f := &fakeProviders{pace: p, reg: prometheus.NewRegistry(), speech: map[string]*fakeSpeech{}}
	f.reqs = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fake_requests_total", Help: "Requests by endpoint and status."},
		[]string{"endpoint", "status"})
	f.reg.MustRegister(f.reqs, collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	return f
}

// handler serves /v1/audio/transcriptions, /v1/chat/completions,
// /v1/audio/speech, /metrics and /healthz.
func (f *fakeProviders) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/audio/transcriptions", f.counted("transcriptions", f.transcribe))
	mux.HandleFunc("POST /v1/chat/completions", f.counted("chat", f.chat))
	mux.HandleFunc("POST /v1/audio/speech", f.counted("speech", f.speak))
	mux.Handle("GET /metrics", promhttp.HandlerFor(f.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	return mux
}

// statusWriter remembers the status for the request counter.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(c int) { w.status = c; w.ResponseWriter.WriteHeader(c) }
func (w *statusWriter) Flush() {
	if fl, ok := w.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

func (f *fakeProviders) counted(name string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h(sw, r)
		f.reqs.WithLabelValues(name, fmt.Sprint(sw.status)).Inc()
	}
}

// fail writes an OpenAI-style error.
func fail(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"message": msg, "type": "invalid_request_error"}})
}

// wait sleeps d on a timer, or returns false when the request went away.
func wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func pick(list []string, key string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	return list[h.Sum32()%uint32(len(list))]
}

// transcribe answers the multipart upload the router's openai provider
// sends (model, response_format=json, language, file=turn.wav): one of
// fakeUtterances when the WAV holds at least 200 ms above -40 dBFS, else
// "" (nothing heard).
func (f *fakeProviders) transcribe(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, fakeMaxUpload)
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		fail(w, http.StatusBadRequest, "want multipart/form-data")
		return
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	var wav []byte
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fail(w, http.StatusBadRequest, "multipart: "+err.Error())
			return
		}
		if p.FormName() == "file" {
			if wav, err = io.ReadAll(p); err != nil {
				fail(w, http.StatusRequestEntityTooLarge, "file: "+err.Error())
				return
			}
		}
	}
	voiced, err := voicedFrames(wav)
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	text := ""
	if voiced >= 10 {
		text = fakeUtterances[voiced%len(fakeUtterances)]
	}
	if !wait(r.Context(), f.pace.STTDelay) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"text": text})
}

// voicedFrames counts the 20 ms frames above -40 dBFS of a mono 16-bit WAV.
func voicedFrames(wav []byte) (int, error) {
	if len(wav) < 44 || string(wav[0:4]) != "RIFF" || string(wav[8:12]) != "WAVE" {
		return 0, errors.New("file: not a WAV")
	}
	rate := int(binary.LittleEndian.Uint32(wav[24:28]))
	if binary.LittleEndian.Uint16(wav[22:24]) != 1 || binary.LittleEndian.Uint16(wav[34:36]) != 16 || rate < 8000 || rate > 48000 {
		return 0, errors.New("file: want mono 16-bit PCM")
	}
	data := wav[44:]
	frame := rate / 50
	n := 0
	for i := 0; (i+1)*frame*2 <= len(data); i++ {
		var sum float64
		for j := range frame {
			v := float64(int16(binary.LittleEndian.Uint16(data[(i*frame+j)*2:])))
			sum += v * v
		}
		if math.Sqrt(sum/float64(frame)) > 32768*0.01 {
			n++
		}
	}
	return n, nil
}

type fakeChatRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
}

// chat answers /chat/completions with one of fakeReplies (chosen by the
// last user message), streamed a word per token over SSE when asked.
func (f *fakeProviders) chat(w http.ResponseWriter, r *http.Request) {
	var req fakeChatRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, fakeMaxJSON))
	if err := dec.Decode(&req); err != nil {
		fail(w, http.StatusBadRequest, "body: "+err.Error())
		return
	}
	last := ""
	for _, m := range req.Messages {
		if m.Role == "user" {
			last = m.Content
		}
	}
	reply := pick(fakeReplies, last)
	if !wait(r.Context(), f.pace.TTFT) {
		return
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion", "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": map[string]string{"role": "assistant", "content": reply}, "finish_reason": "stop"}}})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fl, _ := w.(http.Flusher)
	chunk := func(delta map[string]string, finish any) {
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	chunk(map[string]string{"role": "assistant"}, nil)
	words := strings.SplitAfter(reply, " ")
	for i, tok := range words {
		if i > 0 && !wait(r.Context(), f.pace.TokenEvery) {
			return
		}
		chunk(map[string]string{"content": tok}, nil)
	}
	chunk(map[string]string{}, "stop")
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
}
