package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/veraneural/vera-gateway/audio/wavio"
	"github.com/veraneural/vera-gateway/fixtures"
	"github.com/veraneural/vera-gateway/gateway/router"
)

// fakesRouterConfig is the router configured with the fake providers at
// base (…/v1) for listen, converse and speak (response_format pcm), plus
// a "speak-opus" slot asking for opus.
func fakesRouterConfig(base string) router.Config {
	c := router.DefaultConfig()
	c.Models = []router.ModelConfig{
		{Name: "fake-stt", Provider: router.ProviderOpenAI, BaseURL: base, Model: "whisper-1", TTFTMs: 5000, TimeoutMs: 10000},
		{Name: "fake-llm", Provider: router.ProviderOpenAI, BaseURL: base, Model: "gpt-fake", TTFTMs: 5000, TimeoutMs: 20000},
		{Name: "fake-tts", Provider: router.ProviderOpenAI, BaseURL: base, Model: "tts-1", AudioFormat: "pcm", TTFTMs: 5000, TimeoutMs: 20000},
		{Name: "fake-tts-opus", Provider: router.ProviderOpenAI, BaseURL: base, Model: "tts-1", AudioFormat: "opus", TTFTMs: 5000, TimeoutMs: 20000},
	}
	c.Slots = map[string][]string{
		router.SlotListen: {"fake-stt"}, router.SlotConverse: {"fake-llm"}, router.SlotSpeak: {"fake-tts"}, "speak-opus": {"fake-tts-opus"},
	}
	return c
}

func startFakes(t *testing.T, pace fakePace) string {
	t.Helper()
	return startFakesServer(t, pace).URL
}

// startFakesServer is startFakes returning the server, for a test that
// closes it again before a later stack's leak guard looks (Close is
// idempotent).
func startFakesServer(t *testing.T, pace fakePace) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(newFakeProviders(pace).handler())
	t.Cleanup(srv.Close)
	return srv
}

// TestFakesThroughRouter: the router's own openai provider talks to the
// fakes in every slot: a spoken turn is heard as one of the utterances and
// silence as nothing; the reply streams in several deltas; speech comes
// back as PCM of the text's length, or as 20 ms Opus packets passed
// through.
func TestFakesThroughRouter(t *testing.T) {
	base := startFakes(t, defaultPace().scaled(0))
	r, err := router.New(fakesRouterConfig(base+"/v1"), func(string) string { return "" }, router.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	a, err := fixtures.LoadWAV(filepath.Join("..", "..", "testdata", "voice", "gohome.16k.wav"))
	if err != nil {
		t.Fatal(err)
	}
	hear := func(pcm []int16) string {
		ls, err := r.Listen(ctx, router.ListenRequest{})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = ls.Close() }()
		for i := 0; i+320 <= len(pcm); i += 320 {
			if err := ls.Write(pcm[i : i+320]); err != nil {
				t.Fatal(err)
			}
		}
		tr, err := ls.Final(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return tr.Text
	}
	if got := hear(a.Samples); !slices.Contains(fakeUtterances, got) {
		t.Errorf("speech heard as %q, want one of the utterances", got)
	}
	if got, again := hear(a.Samples), hear(a.Samples); got != again {
		t.Errorf("the same turn heard as %q and %q", got, again)
	}
	if got := hear(make([]int16, 16000)); got != "" {
		t.Errorf("silence heard as %q", got)
	}

	var deltas []string
	rep, err := r.Converse(ctx, router.ConverseRequest{Slot: router.SlotConverse, Thread: router.NewThread("s_fake"), Text: "I had a long day at work today."},
		func(d string) error { deltas = append(deltas, d); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(fakeReplies, rep.Message) || len(deltas) < 5 || strings.Join(deltas, "") != rep.Message {
		t.Errorf("reply %q in %d deltas %q", rep.Message, len(deltas), deltas)
	}

	text := "That sounds like a lot."
	want := time.Duration(len(text)) * time.Second / fakeCharsPerSec
	var pcm, opus int
	if _, err := r.Speak(ctx, router.SpeakRequest{Text: text, SampleRate: 16000, PCMOnly: true}, func(c router.AudioChunk) error {
		if c.Codec != router.CodecPCM || c.SampleRate != 16000 {
			t.Fatalf("chunk %s at %d Hz", c.Codec, c.SampleRate)
		}
		pcm += len(c.PCM)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := time.Duration(pcm) * time.Second / 16000; got < want-50*time.Millisecond || got > want+50*time.Millisecond {
		t.Errorf("pcm speech %v, want %v", got, want)
	}
	if _, err := r.Speak(ctx, router.SpeakRequest{Slot: "speak-opus", Text: text}, func(c router.AudioChunk) error {
		if d, err := wavio.OpusDuration(c.Opus); c.Codec != router.CodecOpus || err != nil || d != fixtures.FrameDuration {
			t.Fatalf("chunk %s, %v %v", c.Codec, d, err)
		}
		opus++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := time.Duration(opus) * fixtures.FrameDuration; got < want-40*time.Millisecond || got > want+40*time.Millisecond {
		t.Errorf("opus speech %v (%d packets), want %v", got, opus, want)
	}
}

// TestFakesRefuseBadInput: malformed or oversized requests get an
// OpenAI-style error with a 4xx status, and the fakes listen on loopback
// only.
func TestFakesRefuseBadInput(t *testing.T) {
	base := startFakes(t, defaultPace().scaled(0))
	post := func(path, ctype string, body []byte) (int, string) {
		resp, err := http.Post(base+path, ctype, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var env struct {
			Error struct {
				Type string `json:"type"`
			} `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&env)
		return resp.StatusCode, env.Error.Type
	}
	for _, c := range []struct {
		path, ctype string
		body        []byte
		status      int
	}{
		{"/v1/chat/completions", "application/json", []byte("{"), 400},
		{"/v1/audio/speech", "application/json", []byte(`{"input":"","response_format":"pcm"}`), 400},
		{"/v1/audio/speech", "application/json", []byte(`{"input":"hi","response_format":"mp3"}`), 400},
		{"/v1/audio/speech", "application/json", []byte(`{"input":"` + strings.Repeat("a", fakeMaxSpeech+1) + `","response_format":"pcm"}`), 400},
		{"/v1/audio/transcriptions", "text/plain", []byte("x"), 400},
		{"/v1/audio/transcriptions", "multipart/form-data; boundary=b", []byte("--b\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nnot a wav\r\n--b--\r\n"), 400},
		{"/v1/chat/completions", "application/json", bytes.Repeat([]byte(" "), fakeMaxJSON+1), 400},
	} {
		if status, typ := post(c.path, c.ctype, c.body); status != c.status || typ != "invalid_request_error" {
			t.Errorf("%s %.40q: %d %q, want %d invalid_request_error", c.path, c.body, status, typ, c.status)
		}
	}
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:0", "example.com:80", "nohost"} {
		if ln, err := listenLoopback(addr); err == nil {
			_ = ln.Close()
			t.Errorf("listened on %s", addr)
		}
	}
}
