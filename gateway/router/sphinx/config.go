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
	// Pool is the most decoders kept; each holds its own copy of the models.
	Pool int `yaml:"pool"`
	// KeyphraseFile, when set, names a keyword list (one "phrase /threshold/"
	// per line) registered as the search SearchKeyphrase on every decoder.
	KeyphraseFile string `yaml:"keyphrase_file"`
	// Spot configures the crisis key-phrase spotter (NewSpotPool).
	Spot SpotConfig `yaml:"spot"`
}

// DefaultConfig uses Debian's pocketsphinx-en-us model and a pool of four
// decoders (created on demand, ~50 MB each): with two, a third concurrent
// turn waited past its TTFT budget and failed. Size it to the concurrent
// turns a deployment expects.
func DefaultConfig() Config {
	return Config{
		HMM:  "/usr/share/pocketsphinx/model/en-us/en-us",
		Dict: "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict",
		LM:   "/usr/share/pocketsphinx/model/en-us/en-us.lm.bin",
		Pool: 4,
		Spot: DefaultSpotConfig(),
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
