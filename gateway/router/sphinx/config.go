package sphinx

import (
	"errors"
	"fmt"
)

// Config locates the model files and sizes the decoder pool.
type Config struct {
	// HMM is the acoustic model directory.
	HMM string `yaml:"hmm"`
	// Dict is the pronunciation dictionary.
	Dict string `yaml:"dict"`
	// LM is the (binary or ARPA) language model.
	LM string `yaml:"lm"`
	// Pool is the most turns recognised at once (decoders in use; each
	// holds its own copy of the models, ~50 MB). A live turn is decoded as
	// it is spoken, so the pool is what the workers can keep up with in
	// real time: one stream costs about 0.37 of a core with its spotter
	// (BENCHMARKS.md, "the media path").
	Pool int `yaml:"pool"`
	// SafetyReserve is how many decoders beyond Pool only turns of a
	// session whose safety level is raised may use, so that such a turn
	// never waits for an ordinary one to end.
	SafetyReserve int `yaml:"safety_reserve"`
	// Workers is how many OS threads run the decoders' CPU-heavy calls
	// (work.go): at most that many cores decode at any time.
	Workers int `yaml:"workers"`
	// Nice lowers the workers' scheduling priority by that much (like
	// nice -n; 0, the default, keeps the gateway's own). The bound on
	// Workers already leaves the media path a core; a nice value also
	// yields to every other process on the host, which on a shared host
	// starves the recogniser (BENCHMARKS.md, "the media path").
	Nice int `yaml:"nice"`
	// FwdFlat runs pocketsphinx's second, flat-lexicon pass over the whole
	// utterance when it ends (-fwdflat): it re-scores every frame after the
	// person has stopped speaking, so its cost is the turn's length times
	// a fraction of the streaming pass, all of it between the end of the
	// turn and the transcript (BENCHMARKS.md, "first reply").
	FwdFlat bool `yaml:"fwdflat"`
	// BestPath rescores the word lattice for the final hypothesis
	// (-bestpath), also after the end of the turn.
	BestPath bool `yaml:"bestpath"`
	// SettleMs is how much quiet after speech a transcription decoder waits
	// before it runs those final passes, while the turn detector still
	// waits for its own end of turn (settle.go): shorter than
	// voice.turn.silence_duration_ms, so that the transcript is ready
	// when the turn ends. 0 runs them at the end of the turn.
	SettleMs int `yaml:"settle_ms"`
	// KeyphraseFile, when set, names a keyword list (one "phrase /threshold/"
	// per line) registered as the search SearchKeyphrase on every decoder.
	KeyphraseFile string `yaml:"keyphrase_file"`
	// Spot configures the crisis key-phrase spotter (NewSpotPool).
	Spot SpotConfig `yaml:"spot"`
}

// DefaultConfig uses Debian's pocketsphinx-en-us model, one worker thread
// fewer than GOMAXPROCS (one on two cores) at the gateway's priority, and two live turns
// per worker (decoders created on demand) plus one in reserve for raised
// safety: what a worker decodes in real time (2 × 0.37 of a core; three
// streams, 1.1 cores, fall behind and hold their decoders longer), measured
// in BENCHMARKS.md, "the media path". More concurrent turns than that wait
// in the pool's queue; the voice path answers a turn that waits too long as
// busy.
func DefaultConfig() Config {
	w := defaultWorkers()
	return Config{
		HMM:           "/usr/share/pocketsphinx/model/en-us/en-us",
		Dict:          "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict",
		LM:            "/usr/share/pocketsphinx/model/en-us/en-us.lm.bin",
		Pool:          2 * w,
		SafetyReserve: 1,
		Workers:       w,
		Nice:          0,
		FwdFlat:       true,
		BestPath:      true,
		SettleMs:      250,
		Spot:          DefaultSpotConfig(),
	}
}

// Validate checks the keys; it does not touch the file system.
func (c Config) Validate() error {
	switch {
	case c.HMM == "":
		return errors.New("sphinx.hmm: must be set")
	case c.Dict == "":
		return errors.New("sphinx.dict: must be set")
	case c.LM == "":
		return errors.New("sphinx.lm: must be set")
	case c.Pool < 1 || c.Pool > 64:
		return fmt.Errorf("sphinx.pool: must be in [1,64], got %d", c.Pool)
	case c.SafetyReserve < 0 || c.SafetyReserve > 8:
		return fmt.Errorf("sphinx.safety_reserve: must be in [0,8], got %d", c.SafetyReserve)
	case c.Workers < 1 || c.Workers > 64:
		return fmt.Errorf("sphinx.workers: must be in [1,64], got %d", c.Workers)
	case c.Nice < 0 || c.Nice > 19:
		return fmt.Errorf("sphinx.nice: must be in [0,19], got %d", c.Nice)
	case c.SettleMs < 0 || c.SettleMs > 5000:
		return fmt.Errorf("sphinx.settle_ms: must be in [0,5000], got %d", c.SettleMs)
	}
	if c.Spot.Enabled {
		return c.Spot.Validate()
	}
	return nil
}

// SpotConfig configures the key-phrase spotter: a keyword search run on the
// turn's audio beside transcription, so that crisis words reach the safety
// detector even when the transcript garbles them.
type SpotConfig struct {
	// Enabled runs the spotter on every listened turn.
	Enabled bool `yaml:"enabled"`
	// KeyphraseFile names a keyphrase list ("phrase min_score" per line),
	// loaded by NewSpotPool like the model files; empty uses Keyphrases or
	// else the built-in crisis list (crisis.kws).
	KeyphraseFile string `yaml:"keyphrase_file"`
	// Keyphrases, when set (by code, not YAML), replace the built-in list.
	Keyphrases []Keyphrase `yaml:"-"`
	// PhoneLoop is pocketsphinx's -kws_plp: the probability of the phone
	// loop that models everything but the key phrases. Smaller makes the
	// loop costlier, so phrases are spotted more readily.
	PhoneLoop float64 `yaml:"phone_loop"`
	// TargetDBFS is the speech level the spotter's gain control brings its
	// input to, in dBFS RMS.
	TargetDBFS float64 `yaml:"target_dbfs"`
}

// DefaultSpotConfig enables the built-in crisis list with the phone-loop
// probability and level tuned in BENCHMARKS.md "Crisis key-phrase spotting".
func DefaultSpotConfig() SpotConfig {
	return SpotConfig{Enabled: true, PhoneLoop: 1e-10, TargetDBFS: -18}
}

// Validate checks the keys.
func (c SpotConfig) Validate() error {
	switch {
	case !(c.PhoneLoop > 0) || c.PhoneLoop > 1:
		return fmt.Errorf("sphinx.spot.phone_loop: must be in (0,1], got %g", c.PhoneLoop)
	case !(c.TargetDBFS >= -40) || c.TargetDBFS > -3:
		return fmt.Errorf("sphinx.spot.target_dbfs: must be in [-40,-3], got %g", c.TargetDBFS)
	}
	for i, k := range c.Keyphrases {
		if k.Phrase == "" || k.MinScore > 0 || !(k.MaxDistance >= 0 && k.MaxDistance <= 2) {
			return fmt.Errorf("sphinx.spot.keyphrases[%d]: phrase must be set, min score <= 0 and max distance in [0,2]", i)
		}
	}
	return nil
}

// phrases returns the configured list or the built-in one.
func (c SpotConfig) phrases() []Keyphrase {
	if len(c.Keyphrases) > 0 {
		return c.Keyphrases
	}
	return CrisisKeyphrases()
}
