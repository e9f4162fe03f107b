package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/veraneural/vera-gateway/audio/wavio"
	"github.com/veraneural/vera-gateway/fixtures"
)

type fakeSpeechRequest struct {
	Model          string `json:"model"`
	Input          string `json:"input"`
	Voice          string `json:"voice"`
	ResponseFormat string `json:"response_format"`
}

// speak answers /audio/speech with a synthetic voice (response_format pcm:
// 24 kHz s16le, wav, or opus: Ogg Opus, 20 ms packets), its first audio
// after TTSTTFB and the rest at TTSSpeed × real time.
func (f *fakeProviders) speak(w http.ResponseWriter, r *http.Request) {
	var req fakeSpeechRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, fakeMaxJSON)).Decode(&req); err != nil {
		fail(w, http.StatusBadRequest, "body: "+err.Error())
		return
	}
	n := utf8.RuneCountInString(req.Input)
	if n == 0 || n > fakeMaxSpeech {
		fail(w, http.StatusBadRequest, fmt.Sprintf("input: 1 to %d characters, got %d", fakeMaxSpeech, n))
		return
	}
	format := req.ResponseFormat
	if format == "" {
		format = "mp3" // OpenAI's default, which the fakes do not make
	}
	if format != "pcm" && format != "wav" && format != "opus" {
		fail(w, http.StatusBadRequest, "response_format: pcm, wav or opus, got "+format)
		return
	}
	sp, err := f.synth(req.Input)
	if err != nil {
		fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	var body []byte
	switch format {
	case "pcm":
		w.Header().Set("Content-Type", "audio/pcm")
		body = sp.pcm
	case "wav":
		w.Header().Set("Content-Type", "audio/wav")
		body = append(wavHeader(len(sp.pcm)), sp.pcm...)
	default:
		w.Header().Set("Content-Type", "audio/ogg")
		if body, err = oggOpus(sp.opus); err != nil {
			fail(w, http.StatusInternalServerError, err.Error())
			return
		}
	}
	if !wait(r.Context(), f.pace.TTSTTFB) {
		return
	}
	f.stream(r.Context(), w, body, len(sp.pcm))
}

// stream writes body in ten pieces per second of audio (pcmBytes of it at
// 24 kHz), paced at TTSSpeed × real time.
func (f *fakeProviders) stream(ctx context.Context, w http.ResponseWriter, body []byte, pcmBytes int) {
	fl, _ := w.(http.Flusher)
	audio := time.Duration(pcmBytes/2) * time.Second / fakeRate
	pieces := max(1, int(audio/(100*time.Millisecond)))
	size := (len(body) + pieces - 1) / pieces
	start := time.Now()
	for i := 0; i*size < len(body); i++ {
		if f.pace.TTSSpeed > 0 {
			due := time.Duration(float64(i) * float64(100*time.Millisecond) / f.pace.TTSSpeed)
			if !wait(ctx, time.Until(start.Add(due))) {
				return
			}
		}
		if _, err := w.Write(body[i*size : min((i+1)*size, len(body))]); err != nil {
			return
		}
		if fl != nil {
			fl.Flush()
		}
	}
}

// synth is the synthetic voice for text, cached: a buzz at a pitch set by
// the text with syllable-rate loudness, fakeCharsPerSec long (≥ 0.3 s),
// and its Opus encoding.
func (f *fakeProviders) synth(text string) (*fakeSpeech, error) {
	f.mu.Lock()
	sp := f.speech[text]
	f.mu.Unlock()
	if sp != nil {
		return sp, nil
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(text))
	f0 := 100 + float64(h.Sum32()%80)
	d := max(300*time.Millisecond, time.Duration(utf8.RuneCountInString(text))*time.Second/fakeCharsPerSec)
	n := int(d * fakeRate / time.Second)
	pcm := make([]int16, n)
	for i := range pcm {
		t := float64(i) / fakeRate
		env := 0.5 - 0.5*math.Cos(2*math.Pi*4*t) // four syllables a second
		v := 0.0
		for k := 1; k <= 4; k++ {
			v += math.Sin(2*math.Pi*f0*float64(k)*t) / float64(k)
		}
		pcm[i] = int16(6000 * env * v)
	}
	st, err := fixtures.Encode(&fixtures.Audio{Rate: fakeRate, Samples: pcm}, fixtures.EncodeOptions{})
	if err != nil {
		return nil, err
	}
	sp = &fakeSpeech{pcm: make([]byte, 2*n), opus: make([][]byte, len(st.Packets))}
	for i, v := range pcm {
		binary.LittleEndian.PutUint16(sp.pcm[2*i:], uint16(v))
	}
	for i, p := range st.Packets {
		sp.opus[i] = p.Payload
	}
	f.mu.Lock()
	if len(f.speech) >= fakeSpeechCache {
		clear(f.speech) // replies repeat: a full cache is a run of unusual texts
	}
	f.speech[text] = sp
	f.mu.Unlock()
	return sp, nil
}

// oggOpus wraps 20 ms packets in an Ogg Opus stream (audio/wavio).
func oggOpus(pkts [][]byte) ([]byte, error) {
	var buf bytes.Buffer
	ow, err := wavio.NewOggWriter(&buf, wavio.OggHead{Serial: 1, Channels: 1, PreSkip: wavio.DefaultPreSkip, InputRate: fakeRate, Vendor: "vera-replay fakes"})
	if err != nil {
		return nil, err
	}
	for _, p := range pkts {
		if err := ow.WritePacket(p); err != nil {
			return nil, err
		}
	}
	if err := ow.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func wavHeader(dataBytes int) []byte {
	h := make([]byte, 44)
	copy(h[0:], "RIFF")
	binary.LittleEndian.PutUint32(h[4:], uint32(36+dataBytes))
	copy(h[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(h[16:], 16)
	binary.LittleEndian.PutUint16(h[20:], 1)
	binary.LittleEndian.PutUint16(h[22:], 1)
	binary.LittleEndian.PutUint32(h[24:], fakeRate)
	binary.LittleEndian.PutUint32(h[28:], fakeRate*2)
	binary.LittleEndian.PutUint16(h[32:], 2)
	binary.LittleEndian.PutUint16(h[34:], 16)
	copy(h[36:], "data")
	binary.LittleEndian.PutUint32(h[40:], uint32(dataBytes))
	return h
}

// errNotLoopback: -serve-fakes listens on loopback addresses only.
var errNotLoopback = errors.New("-serve-fakes: listen on a loopback address (127.0.0.1:PORT or [::1]:PORT)")

// listenLoopback listens on addr, which must name a loopback IP.
func listenLoopback(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("-serve-fakes: %w", err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, errNotLoopback
	}
	return net.Listen("tcp", addr)
}

// serveFakes runs the fake providers on addr until ctx ends.
func serveFakes(ctx context.Context, addr string, pace fakePace, stderr io.Writer) error {
	ln, err := listenLoopback(addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: newFakeProviders(pace).handler(), ReadHeaderTimeout: 5 * time.Second,
		ErrorLog: slog.NewLogLogger(slog.DiscardHandler, slog.LevelError)}
	fmt.Fprintf(stderr, "vera-replay: fake providers on http://%s/v1 (transcriptions, chat/completions, audio/speech; /metrics)\n", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }() // ends with Shutdown below
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = srv.Shutdown(sctx)
	<-done
	return err
}
