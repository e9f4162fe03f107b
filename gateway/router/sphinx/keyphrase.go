package sphinx

import (
	"bufio"
	_ "embed"
	"fmt"
	"strconv"
	"strings"
)

// crisisList is the built-in crisis key-phrase list the spotter searches for
// when SpotConfig.KeyphraseFile is empty (format: see ParseKeyphrases).
//
//go:embed crisis.kws
var crisisList string

// CrisisKeyphrases returns the built-in crisis key-phrase list.
func CrisisKeyphrases() []Keyphrase {
	ks, err := ParseKeyphrases(crisisList)
	if err != nil {
		// The embedded list is checked by a test; an error here is a build defect.
		return nil
	}
	return ks
}

// Keyphrase is one phrase of the spotter, the least detection score
// (Spot.Score) at which it counts as heard, and how far the turn's
// transcript may sound from it for the spot to count (Gate).
type Keyphrase struct {
	Phrase   string
	MinScore int32
	// MaxDistance is the most Lexicon.Distance from the phrase to the
	// turn's transcript at which a spot agrees with it; 0 is
	// DefaultMaxDistance.
	MaxDistance float64
}

// searchFloor is the pocketsphinx detection threshold every phrase is
// searched with: low enough that the search reports each candidate with its
// score, which is then held against the phrase's MinScore. Thresholds were
// tuned on scores reported at this floor, so they hold only with it.
const searchFloor = "1e-60"

// ParseKeyphrases reads a keyphrase list: one "phrase min_score
// [max_distance]" per line, the score a non-positive integer (see
// Spot.Score), the distance a number in [0,2] (Keyphrase.MaxDistance;
// absent is 0, the default); blank lines and lines starting with # are
// ignored. Phrases are lower-cased words of the recogniser's dictionary.
func ParseKeyphrases(text string) ([]Keyphrase, error) {
	var out []Keyphrase
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(strings.ToLower(line))
		if len(f) < 2 {
			return nil, fmt.Errorf("%w: line %d: want \"phrase min_score\"", ErrKeyphrase, n)
		}
		var k Keyphrase
		if len(f) >= 3 {
			if _, err := strconv.ParseInt(f[len(f)-2], 10, 32); err == nil {
				d, err := strconv.ParseFloat(f[len(f)-1], 64)
				if err != nil || !(d >= 0 && d <= 2) {
					return nil, fmt.Errorf("%w: line %d: max_distance %q must be a number in [0,2]", ErrKeyphrase, n, f[len(f)-1])
				}
				k.MaxDistance, f = d, f[:len(f)-1]
			}
		}
		v, err := strconv.ParseInt(f[len(f)-1], 10, 32)
		if err != nil || v > 0 {
			return nil, fmt.Errorf("%w: line %d: min_score %q must be an integer <= 0", ErrKeyphrase, n, f[len(f)-1])
		}
		k.Phrase, k.MinScore = strings.Join(f[:len(f)-1], " "), int32(v)
		for _, r := range k.Phrase {
			if !(r >= 'a' && r <= 'z' || r == '\'' || r == ' ') {
				return nil, fmt.Errorf("%w: line %d: phrase %q has character %q", ErrKeyphrase, n, k.Phrase, r)
			}
		}
		if seen[k.Phrase] {
			return nil, fmt.Errorf("%w: line %d: phrase %q listed twice", ErrKeyphrase, n, k.Phrase)
		}
		seen[k.Phrase] = true
		out = append(out, k)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKeyphrase, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no phrases", ErrKeyphrase)
	}
	return out, nil
}

// formatKeyphrases writes ks in pocketsphinx's -kws file format.
func formatKeyphrases(ks []Keyphrase) string {
	var b strings.Builder
	for _, k := range ks {
		fmt.Fprintf(&b, "%s /%s/\n", k.Phrase, searchFloor)
	}
	return b.String()
}

// Spot is one key phrase the spotter heard.
type Spot struct {
	Phrase string
	// Score is the log (base 1.0001) of p(phrase)/p(phone loop) at detection.
	Score int32
	// StartFrame and EndFrame are 10 ms frames from the utterance start.
	StartFrame, EndFrame int
}
