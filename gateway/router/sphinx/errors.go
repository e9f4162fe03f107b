package sphinx

import "errors"

var (
	// ErrUnavailable is returned by NewPool in builds without the embedded
	// engines (build tag noembedded).
	ErrUnavailable = errors.New("sphinx: not built in (noembedded)")
	// ErrClosed is returned by Acquire after Close.
	ErrClosed = errors.New("sphinx: pool closed")
	// ErrDecoder wraps a failure reported by libpocketsphinx.
	ErrDecoder = errors.New("sphinx: decoder failed")
	// ErrNoSearch is returned by Decoder.Start for a search that was not
	// configured (e.g. SearchKeyphrase without Config.KeyphraseFile).
	ErrNoSearch = errors.New("sphinx: search not configured")
	// ErrKeyphrase reports a malformed keyphrase list.
	ErrKeyphrase = errors.New("sphinx: bad keyphrase list")
)

// Search names understood by Decoder.Start.
const (
	// SearchLM is the default large-vocabulary search.
	SearchLM = ""
	// SearchKeyphrase is the keyword-spotting search from Config.KeyphraseFile.
	SearchKeyphrase = "kws"
	// SearchSpot is the crisis key-phrase spotter's search, the only one of
	// a decoder made by NewSpotPool.
	SearchSpot = "spot"
)
