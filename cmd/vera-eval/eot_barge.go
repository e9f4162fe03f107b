package main

// "vera-eval eot-barge" counts false and missed barge-ins on a labelled set
// it makes with espeak-ng: the person says a sentence, VERA answers (its
// voice leaks back into the microphone 15–25 dB down, 80–200 ms late, and
// the pipeline's echo guard hears the reference), and a second into the
// reply the person says a backchannel ("mm-hm", "yeah", "right", …) or an
// interruption ("wait", "hold on", "that's not right", …). Backchannels are
// mostly said softly (8–14 dB under the person's sentence) and a quarter of
// them at full voice; interruptions mostly at full voice and a quarter
// softly. The inbound pipeline (jitter-free: the mic frames go straight to
// Analyse) with the default turn detector, the echo guard on and the
// embedded recogniser started at SpeechStarted with the prefix, as the
// voice session does, decides; speech over the reply ducks it by 12 dB
// (OverlapStarted: its echo and the echo guard's reference drop with it)
// until OverlapEnded, as the session's sender does, and an interruption
// pauses the reply (the echo stops). Scored: an interruption is caught when OverlapSpeech comes within
// 300 ms of its speech's start (late or missed otherwise); a backchannel is
// a false barge-in when it raises OverlapSpeech at all; and the final
// transcript of each turn is judged a backchannel or not (the session
// drops backchannel turns).

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"sort"
	"text/tabwriter"

	"github.com/veraneural/vera-gateway/audio"
	"github.com/veraneural/vera-gateway/audio/pipeline"
	"github.com/veraneural/vera-gateway/audio/turn"
	"github.com/veraneural/vera-gateway/gateway/router/sphinx"
)

func init() {
	register("eot-barge", command{
		summary: "false and missed barge-ins on an espeak-ng set of backchannels and interruptions over VERA's voice: eot-barge [-json] [-seed S]",
		run:     runEOTBarge,
	})
}

var (
	bargeBackchannels = []string{"mm-hm", "yeah", "right", "okay", "uh-huh", "I see", "yes", "sure", "mm", "yeah yeah", "oh right", "got it"}
	bargeInterrupts   = []string{"wait", "stop", "hold on", "no no no", "sorry, what did you say?", "actually, I meant tomorrow",
		"can you repeat that?", "that's not right", "excuse me", "wait a second", "no, listen to me", "I need help now"}
	bargeVoices = []eotVoice{{"en-us", 130, 40, "", "espeak"}, {"en-gb", 150, 50, "", "espeak"}, {"en-us+f3", 140, 60, "", "espeak"}, {"en-gb-scotland", 140, 50, "", "espeak"},
		{"en-us+f4", 150, 55, "", "espeak"}, {"en-029", 125, 40, "", "espeak"}}
	// bargeDuck is the reply's gain while ducked (gateway/voice's duckGain).
	bargeDuck  = 0.25
	bargeReply = "I am sorry to hear that. It sounds like it was a really hard day, and it makes sense that you feel tired. Would you like to tell me more about it?"
)

// bargeOutcome is one case's result.
type bargeOutcome struct {
	backchannel bool
	interrupted bool
	delayMs     int  // OverlapSpeech after the speech's start
	finalBack   bool // the final transcript is only backchannel words
	final       string
	levels      string // the detector's levels at its decision (-v)
}

func levelsOf(d *turn.Detector) string {
	peak, echo, user, n := d.OverlapLevels()
	return fmt.Sprintf("peak %.1f echo %.1f user %.1f (%d): %+.1f dB", peak, echo, user, n, peak-user)
}

type bargeReport struct {
	Backchannels     int     `json:"backchannels"`
	FalseBargeIns    int     `json:"false_barge_ins"`
	BackchannelKept  int     `json:"backchannel_turns_dropped"`
	Interruptions    int     `json:"interruptions"`
	Caught300        int     `json:"caught_within_300ms"`
	Late             int     `json:"late"`
	Missed           int     `json:"missed"`
	InterruptDropped int     `json:"interruptions_heard_as_backchannel"`
	DelayP50         float64 `json:"delay_ms_p50"`
	DelayP90ms       float64 `json:"delay_ms_p90"`
	Words            bool    `json:"words"`
}

func runEOTBarge(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eot-barge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the counts as JSON")
	seed := fs.Uint64("seed", 1, "random seed (levels, echo, timing)")
	words := fs.Bool("words", true, "run the embedded recogniser as the session does")
	verbose := fs.Bool("v", false, "list every case")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for _, tool := range []string{"espeak-ng", "sox"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s is needed: %w", tool, err)
		}
	}
	tmp, err := os.MkdirTemp("", "vera-eot-barge-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var pool *sphinx.Pool
	if *words {
		if pool, err = sphinx.NewPool(sphinx.DefaultConfig()); err != nil {
			fmt.Fprintf(stderr, "vera-eval eot-barge: no recogniser (%v): no words\n", err)
			pool = nil
		} else {
			defer pool.Close()
		}
	}
	reply, err := speakPhrase(tmp, "en-gb+f2", 160, 55, bargeReply)
	if err != nil {
		return err
	}
	rep := bargeReport{Words: pool != nil}
	var delays []float64
	rng := rand.New(rand.NewPCG(*seed, 99))
	for vi, v := range bargeVoices {
		intro, err := speakPhrase(tmp, v.name, v.speed, v.pitch, "I had a long day at work and I feel really tired")
		if err != nil {
			return err
		}
		for k, set := range [][]string{bargeBackchannels, bargeInterrupts} {
			back := k == 0
			for ti, text := range set {
				if (ti+vi)%2 == 1 { // each voice says half of each list
					continue
				}
				sp, err := speakPhrase(tmp, v.name, v.speed, v.pitch, text)
				if err != nil {
					return err
				}
				o, err := bargeCase(intro, reply, sp, back, rng, pool)
				if err != nil {
					return err
				}
				if *verbose {
					fmt.Fprintf(stderr, "%-15s %-12s %-28q interrupted %-5v at %4d ms  final %q backchannel %v  %s\n",
						v.name, map[bool]string{true: "backchannel", false: "interruption"}[back], text, o.interrupted, o.delayMs, o.final, o.finalBack, o.levels)
				}
				if back {
					rep.Backchannels++
					if o.interrupted {
						rep.FalseBargeIns++
					}
					if o.finalBack {
						rep.BackchannelKept++
					}
					continue
				}
				rep.Interruptions++
				switch {
				case !o.interrupted:
					rep.Missed++
				case o.delayMs <= 300:
					rep.Caught300++
				default:
					rep.Late++
				}
				if o.interrupted {
					delays = append(delays, float64(o.delayMs))
				}
				if o.finalBack {
					rep.InterruptDropped++
				}
			}
		}
	}
	sort.Float64s(delays)
	if len(delays) > 0 {
		rep.DelayP50, rep.DelayP90ms = percentile(delays, 50), percentile(delays, 90)
	}
	if *asJSON {
		return writeJSON(stdout, rep)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "backchannels\t%d\tfalse barge-ins (paused the reply)\t%d\tturns dropped as backchannel\t%d\n", rep.Backchannels, rep.FalseBargeIns, rep.BackchannelKept)
	fmt.Fprintf(tw, "interruptions\t%d\tstopped within 300 ms\t%d\tlate\t%d\tmissed\t%d\theard as a backchannel\t%d\n", rep.Interruptions, rep.Caught300, rep.Late, rep.Missed, rep.InterruptDropped)
	fmt.Fprintf(tw, "delay from the interruption's start to the pause\tp50 %.0f ms\tp90 %.0f ms\n", rep.DelayP50, rep.DelayP90ms)
	return tw.Flush()
}

// bargeMix is one barge-in case's microphone: the person's sentence, the
// reply's echo from replyAt, and the second utterance at overAt.
type bargeMix struct {
	mic             []float64
	replyAt, overAt int
	echoGain        float64
	echoDelay       int
}

// mixBarge levels and mixes a case (the random draws in a fixed order, so
// a seed gives the same set).
func mixBarge(intro, over []int16, back bool, rng *rand.Rand) bargeMix {
	lvl := func(pcm []int16, peakDb float64) []int16 {
		g := math.Pow(10, peakDb/20) * 32767 / float64(max(peakAbs(pcm), 1))
		out := make([]int16, len(pcm))
		for i, s := range pcm {
			out[i] = int16(max(min(math.Round(float64(s)*g), 32767), -32768))
		}
		return out
	}
	// The person's level: their sentence at −8 dBFS peak; the second
	// utterance under it as the label says.
	under := 0.0
	soft := rng.Float64() < 0.75
	if back == soft {
		under = 8 + 6*rng.Float64()
	} else {
		under = 3 * rng.Float64()
	}
	intro, over = lvl(intro, -8), lvl(over, -8-under)
	const sr = audio.SampleRate
	replyAt := int(0.5*sr) + len(intro) + int(1.0*sr)
	overAt := replyAt + sr + rng.IntN(sr/2)
	total := overAt + len(over) + 2*sr
	echoGain := math.Pow(10, -(15+10*rng.Float64())/20)
	echoDelay := (80 + rng.IntN(121)) * sr / 1000
	mic := make([]float64, total)
	noise := rand.New(rand.NewPCG(uint64(len(over)), 5))
	for i := range mic {
		mic[i] = noise.NormFloat64() * 8 // about −72 dBFS
	}
	for i, s := range intro {
		mic[int(0.5*sr)+i] += float64(s)
	}
	for i, s := range over {
		mic[overAt+i] += float64(s)
	}
	return bargeMix{mic: mic, replyAt: replyAt, overAt: overAt, echoGain: echoGain, echoDelay: echoDelay}
}

// bargeCase plays one case through the inbound pipeline.
func bargeCase(intro, reply, over []int16, back bool, rng *rand.Rand, pool *sphinx.Pool) (bargeOutcome, error) {
	o := bargeOutcome{backchannel: back}
	m := mixBarge(intro, over, back, rng)
	mic, replyAt, overAt, total, echoGain, echoDelay := m.mic, m.replyAt, m.overAt, len(m.mic), m.echoGain, m.echoDelay
	const sr = audio.SampleRate
	cfg := pipeline.DefaultConfig()
	in, err := pipeline.New(cfg)
	if err != nil {
		return o, err
	}
	var dec *sphinx.Decoder
	since := 0
	pausedAt := -1 // mic sample at which the reply paused
	// gain[t] is the reply's gain as played at mic sample t; duck the
	// gain of frames from the next one on.
	gain := make([]float64, total)
	duck := 1.0
	var final string
	emit := func(e *turn.Event) {
		switch e.Type {
		case turn.OverlapStarted:
			duck = bargeDuck
		case turn.OverlapEnded:
			duck = 1
			if !o.interrupted {
				o.levels = levelsOf(in.Turn())
			}
		case turn.OverlapSpeech:
			if !o.interrupted {
				o.levels = levelsOf(in.Turn())
				o.interrupted = true
				o.delayMs = int((e.At - int64(overAt)) * 1000 / sr)
				pausedAt = int(e.At)
			}
		case turn.SpeechStarted:
			if pool != nil && int(e.SpeechStart) >= replyAt && dec == nil {
				if d, err := pool.Acquire(context.Background()); err == nil && d.Start(sphinx.SearchLM) == nil {
					dec = d
					for _, f := range in.Prefix(in.Now() - e.AudioStart) {
						_ = dec.Process(f)
					}
				}
			}
		case turn.SpeechStopped:
			if dec != nil && int(e.SpeechStart) >= replyAt {
				final, _ = dec.End()
				pool.Release(dec)
				dec = nil
			}
		}
	}
	frame := make([]int16, audio.Frame20)
	ref := make([]int16, audio.Frame20)
	for at := 0; at+audio.Frame20 <= total; at += audio.Frame20 {
		playing := at >= replyAt && at < replyAt+len(reply) && (pausedAt < 0 || at < pausedAt)
		for i := range audio.Frame20 {
			gain[at+i] = duck
		}
		for i := range frame {
			v := mic[at+i]
			if j, t := at+i-replyAt-echoDelay, at+i-echoDelay; j >= 0 && j < len(reply) && (pausedAt < 0 || t < pausedAt) {
				v += echoGain * gain[t] * float64(reply[j])
			}
			frame[i] = int16(max(min(math.Round(v), 32767), -32768))
		}
		if playing {
			clear(ref)
			for i, v := range reply[at-replyAt : min(at-replyAt+audio.Frame20, len(reply))] {
				ref[i] = int16(math.Round(duck * float64(v)))
			}
			in.Reference(int64(at+audio.Frame10), ref)
		}
		in.Analyse(frame, int64(at), playing, emit)
		if dec != nil {
			_ = dec.Process(frame)
			since += audio.Frame20
			if since >= partialEvery {
				since = 0
				in.SetTranscript(dec.Hypothesis())
			}
		}
	}
	if dec != nil {
		final, _ = dec.End()
		pool.Release(dec)
	}
	o.final = final
	o.finalBack = turn.IsBackchannel("en", final)
	return o, nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
