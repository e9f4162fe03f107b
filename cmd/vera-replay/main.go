// Package main is the vera-replay command: it drives live voice sessions of
// a vera-gateway over WebRTC from recorded audio, in real time, and reports
// what the gateway did. usageText (printed by -h) is its manual.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/veraneural/vera-gateway/fixtures"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// usageText opens -h; the flags follow it.
const usageText = `vera-replay drives live voice sessions of a vera-gateway over WebRTC from
recorded audio, in real time, and reports what the gateway did.

One session (the default) plays one file (16-bit WAV at 8/12/16/24/48 kHz,
or Ogg Opus of 20 ms packets), prints every event the gateway sends with its
receive time, then one line per turn: answered, nothing heard or unanswered,
and the first reply packet's latency from the true end of speech (the end
input.speech_stopped reports), split into the gateway's segments. It exits
0 once every turn has been answered or reported as not heard and all audio
has played, 2 when -timeout passes first.

  vera-replay -url http://127.0.0.1:8080 -in testdata/router/goforward.16k.wav
  vera-replay -url http://127.0.0.1:8080 -in speech.16k.wav -device phone -json

Load (-sessions N or -duration D): N sessions start at -ramp per second and
loop their clips in real time (one pass per -period) until -duration after
the last one connected; -in may be a directory of NAME.16k.wav files with
NAME.segments.json labels. It prints a table (or with -json one object):
sessions, turns against the labels and what became of them, latencies from
the true end of speech with their segments, the tool's own CPU and the
gateway's CPU, RSS, frame p99 and frame overruns from its /metrics over the
steady window. Exit 1 when any session failed.

  vera-replay -url http://127.0.0.1:8080 -in DIR -sessions 100 -ramp 15 -warmup 20s -duration 30s -json

Soak (-soak): the same, replacing -churn-pct % of the sessions every -churn,
with a flat / not flat verdict on the gateway's goroutines and RSS.

  vera-replay -url http://127.0.0.1:8080 -in DIR -soak -sessions 300 -warmup 20s -duration 10m -churn 10s

Fake providers (-serve-fakes ADDR): OpenAI-compatible transcription, chat
(SSE) and speech (pcm, wav, opus) on a loopback address, with deterministic
answers and realistic pacing (-fake-pace scales it), for talking-load runs
with remote providers; their CPU is their own process's (-fakes URL reports
it). See BENCHMARKS.md, "Live at any load".

  vera-replay -serve-fakes 127.0.0.1:18900

-url takes the gateway's base URL or the full /v1/voice/sessions URL. A
loopback URL keeps ICE on loopback addresses (as -loopback does) unless
-loopback=false is given. Exit 64 on bad flags.

Flags:
`

type options struct {
	url, in, device, token, hello string
	jsonOut, loopback             bool
	timeout, settle               time.Duration
	loss, jitterMs, burst         float64
	reorder, dup                  float64
	seed                          uint64

	// load mode
	load                     bool
	sessions                 int
	ramp                     float64
	duration, period, warmup time.Duration
	mergeGap, window         time.Duration
	connectTimeout           time.Duration
	metrics                  string
	// pprofURL is the gateway's debug listener; with pprofOut set, a CPU
	// profile of the measured window is saved there.
	pprofURL, pprofOut string
	// soak mode: every churn, churnPct % of the sessions hang up and as
	// many new ones join.
	soak     bool
	churn    time.Duration
	churnPct float64
	// answerWait bounds how long a load session waits, after playing, for
	// its last turns' answers before hanging up.
	answerWait time.Duration
	// promptWithin is how soon after the true end of speech a turn's answer
	// (or busy answer) must start to count as prompt (turns_prompt).
	promptWithin time.Duration
	// fakesURL is the fake providers' base URL, whose /metrics gives their
	// CPU in the window.
	fakesURL string

	// serveFakes: run the fake providers on this loopback address instead.
	serveFakes string
	fakePace   float64
}

func parse(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("vera-replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usageText)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.url, "url", "http://127.0.0.1:8080", "the gateway's base URL, or its voice session collection URL (…/v1/voice/sessions)")
	fs.StringVar(&o.in, "in", "", "input WAV (16-bit mono/stereo at 8/12/16/24/48 kHz) or Ogg Opus (mono, 20 ms packets)")
	fs.StringVar(&o.device, "device", "", "device profile id (?device= and the hello)")
	fs.StringVar(&o.token, "token", "", "client token or key (Bearer); dev mode needs none")
	fs.StringVar(&o.hello, "hello", "", "raw JSON hello to send instead of the default one")
	fs.BoolVar(&o.jsonOut, "json", false, "print events as JSON lines")
	fs.BoolVar(&o.loopback, "loopback", false, "keep ICE on loopback addresses only (default: on for a loopback -url)")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "give up after this long")
	fs.DurationVar(&o.settle, "settle", 1500*time.Millisecond, "wait at least this long after playback before exiting")
	fs.Float64Var(&o.loss, "loss", 0, "packet loss percent applied before sending (seeded)")
	fs.Float64Var(&o.jitterMs, "jitter-ms", 0, "send jitter in ms applied before sending (seeded)")
	fs.Float64Var(&o.burst, "burst", 1, "mean loss burst length in packets (with -loss)")
	fs.Float64Var(&o.reorder, "reorder", 0, "percent of packets swapped with the next one (seeded)")
	fs.Float64Var(&o.dup, "dup", 0, "percent of packets sent twice (seeded)")
	fs.Uint64Var(&o.seed, "seed", 1, "impairment seed")
	fs.IntVar(&o.sessions, "sessions", 0, "load mode: number of concurrent sessions")
	fs.Float64Var(&o.ramp, "ramp", 20, "load mode: sessions started per second")
	fs.DurationVar(&o.duration, "duration", 0, "load mode: how long every session stays up after the last one connected")
	fs.DurationVar(&o.warmup, "warmup", 0, "load mode: wait this long after the last session connected before the measured window (lets the spoken AI notice end)")
	fs.DurationVar(&o.period, "period", 10*time.Second, "load mode: one pass of a clip (clip + silence; at least clip + 2 s)")
	fs.DurationVar(&o.mergeGap, "merge-gap", 500*time.Millisecond, "load mode: label gaps shorter than this are one turn (the gateway's turn silence)")
	fs.DurationVar(&o.window, "eot-window", 3*time.Second, "load mode: longest wait for input.speech_stopped after the end of speech")
	fs.DurationVar(&o.connectTimeout, "connect-timeout", 30*time.Second, "load mode: signaling + ICE + data channel deadline per session")
	fs.StringVar(&o.metrics, "metrics", "", "load mode: gateway /metrics URL (default: from -url)")
	fs.StringVar(&o.pprofURL, "pprof", "", "load mode: gateway debug listener base URL (e.g. http://127.0.0.1:6060); with -pprof-out, profile the measured window")
	fs.StringVar(&o.pprofOut, "pprof-out", "", "load mode: write the gateway's CPU profile of the measured window to this file (needs -pprof)")
	fs.BoolVar(&o.soak, "soak", false, "load mode: soak: during -duration, every -churn hang up -churn-pct % of the sessions and start as many new ones; report gateway goroutines and RSS at start and end and whether they stayed flat")
	fs.DurationVar(&o.churn, "churn", 10*time.Second, "soak: how often sessions are replaced")
	fs.Float64Var(&o.churnPct, "churn-pct", 10, "soak: percent of the sessions replaced each -churn (at least one)")
	fs.DurationVar(&o.promptWithin, "prompt-within", 1500*time.Millisecond, "load mode: a turn answered (or told busy) this soon after the end of speech counts in turns_prompt")
	fs.DurationVar(&o.answerWait, "answer-wait", 15*time.Second, "load mode: after playing, wait up to this long for the last turns' answers before hanging up")
	fs.StringVar(&o.fakesURL, "fakes", "", "load mode: the fake providers' base URL (e.g. http://127.0.0.1:18900), to report their CPU in the window")
	fs.StringVar(&o.serveFakes, "serve-fakes", "", "serve the fake OpenAI-compatible providers on this loopback address (e.g. 127.0.0.1:18900) until interrupted")
	fs.Float64Var(&o.fakePace, "fake-pace", 1, "-serve-fakes: scale of the fakes' delays (STT 250 ms, first token 350 ms, a token per 25 ms, TTS first byte 150 ms then 4× real time); 0 answers at once")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q (flags only; see -h)", fs.Arg(0))
	}
	loopbackSet := false
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "sessions", "duration", "soak":
			o.load = true
		case "loopback":
			loopbackSet = true
		}
	})
	if o.serveFakes != "" {
		if o.fakePace < 0 {
			return o, errors.New("-fake-pace must be >= 0")
		}
		return o, nil
	}
	u, loop, err := sessionsURL(o.url)
	if err != nil {
		return o, fmt.Errorf("-url: %w", err)
	}
	o.url = u
	if !loopbackSet {
		o.loopback = loop
	}
	if o.load {
		if err := checkLoad(&o); err != nil {
			return o, err
		}
	}
	if o.in == "" {
		return o, errors.New("-in is required")
	}
	if o.timeout <= 0 || o.settle < 0 {
		return o, errors.New("-timeout must be > 0 and -settle >= 0")
	}
	if o.loss < 0 || o.loss > 100 || o.jitterMs < 0 || o.burst < 1 || o.reorder < 0 || o.reorder > 100 || o.dup < 0 || o.dup > 100 {
		return o, errors.New("-loss, -reorder and -dup must be in [0,100], -jitter-ms >= 0, -burst >= 1")
	}
	if o.hello != "" && !json.Valid([]byte(o.hello)) {
		return o, errors.New("-hello is not valid JSON")
	}
	return o, nil
}

// checkLoad validates the load-mode flags (-sessions defaults to 1).
func checkLoad(o *options) error {
	if o.sessions == 0 {
		o.sessions = 1
	}
	if o.sessions < 1 || o.ramp <= 0 || o.duration <= 0 || o.warmup < 0 || o.period < time.Second || o.mergeGap < 0 || o.window <= 0 || o.connectTimeout <= 0 || o.answerWait < 0 {
		return errors.New("load mode needs -sessions >= 1, -ramp > 0, -duration > 0, -warmup >= 0, -period >= 1s, -merge-gap >= 0, -eot-window > 0, -connect-timeout > 0, -answer-wait >= 0")
	}
	if o.soak && (o.churn <= 0 || o.churnPct <= 0 || o.churnPct > 100) {
		return errors.New("-soak needs -churn > 0 and -churn-pct in (0,100]")
	}
	if (o.pprofURL == "") != (o.pprofOut == "") {
		return errors.New("-pprof and -pprof-out go together")
	}
	if o.pprofURL != "" && o.duration < 2*time.Second {
		return errors.New("-pprof needs -duration >= 2s")
	}
	return nil
}

// line is one printed event.
type line struct {
	ReceivedAt string          `json:"received_at"`
	TMs        float64         `json:"t_ms"` // since playback started (negative: before)
	Event      json.RawMessage `json:"event"`
}

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "vera-replay: %v (-h for help)\n", err)
		return 64
	}
	if o.serveFakes != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		if err := serveFakes(ctx, o.serveFakes, defaultPace().scaled(o.fakePace), stderr); err != nil {
			fmt.Fprintln(stderr, "vera-replay:", err)
			return 1
		}
		return 0
	}
	if o.load {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		f, ok := stdout.(*os.File)
		return runLoad(ctx, o, stdout, stderr, ok && isTerminal(f))
	}
	stream, err := load(o.in)
	if err != nil {
		fmt.Fprintln(stderr, "vera-replay:", err)
		return 1
	}
	if o.loss > 0 || o.jitterMs > 0 || o.reorder > 0 || o.dup > 0 {
		stream = fixtures.Impair(stream, fixtures.Impairment{Seed: o.seed, LossPct: o.loss, BurstLen: o.burst,
			Jitter: time.Duration(o.jitterMs * float64(time.Millisecond)), ReorderPct: o.reorder, DupPct: o.dup})
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()

	var mu sync.Mutex // guards stdout and start
	var start time.Time
	enc := json.NewEncoder(stdout)
	print := func(ev fixtures.Event) {
		mu.Lock()
		defer mu.Unlock()
		t := 0.0 // events before playback (session.created, notice) print at 0
		if !start.IsZero() {
			t = float64(ev.At.Sub(start).Microseconds()) / 1000
		}
		if o.jsonOut {
			_ = enc.Encode(line{ReceivedAt: ev.At.UTC().Format(time.RFC3339Nano), TMs: t, Event: ev.Data})
			return
		}
		fmt.Fprintf(stdout, "%9.1f ms  %-24s %s\n", t, ev.Type, compact(ev.Data))
	}
	hello := []byte(o.hello)
	if o.hello == "" && o.device != "" {
		hello, _ = json.Marshal(map[string]string{"type": "hello", "device": o.device})
	}
	sc := fixtures.Scenario{
		Client: fixtures.ClientOptions{URL: o.url, Token: o.token, Device: o.device, LoopbackOnly: o.loopback, OnEvent: print},
		Stream: stream,
		Settle: o.settle,
		OnPlayStart: func(at time.Time) {
			mu.Lock()
			start = at
			mu.Unlock()
		},
	}
	if len(hello) > 0 {
		sc.Hello = hello
	}
	res, err := fixtures.Run(ctx, sc)
	if res != nil {
		recs := turnRecords(res.Events, res.Audio)
		mu.Lock()
		printTurns(stdout, o.jsonOut, recs, start)
		mu.Unlock()
		fmt.Fprintf(stderr, "vera-replay: session %s: sent %d packets (%.1f s), %d events, %d turns (%s), %d audio packets received\n",
			res.Location, len(stream.Packets), stream.Duration.Seconds(), len(res.Events), len(recs), outcomeCounts(recs), len(res.Audio))
	}
	if err != nil {
		fmt.Fprintln(stderr, "vera-replay:", err)
		if errors.Is(err, fixtures.ErrIncomplete) {
			return 2
		}
		return 1
	}
	return 0
}

// load reads a WAV (encoded here) or an Ogg Opus file of 20 ms packets
// (sent as is).
func load(path string) (*fixtures.Stream, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".ogg", ".opus":
		return fixtures.LoadOggStream(path, fixtures.EncodeOptions{})
	default:
		a, err := fixtures.LoadWAV(path)
		if err != nil {
			return nil, err
		}
		return fixtures.Encode(a, fixtures.EncodeOptions{FEC: true})
	}
}

func compact(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		return s[:300] + " [truncated]"
	}
	return s
}
