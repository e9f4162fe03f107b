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
	return nil
}
