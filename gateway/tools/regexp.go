package tools

import (
	"fmt"
	"regexp"
	"regexp/syntax"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// maxPatternSize bounds one pattern's program: Go's regexp matches in time
// linear in the input, but times the program size, so `\p{L}{1000}` (11
// characters, 1000 steps) makes every character of a long string cost a
// thousand steps. Counted before anything is compiled.
const maxPatternSize = 1000

// maxPatternTotal bounds the steps of every pattern one schema compiles,
// together (each pattern is compiled twice: checked as a "regex", then
// used): a thousand patterns of a thousand steps would take over half a
// second and half a gigabyte.
const maxPatternTotal = 20_000

// boundedRegexp is a compiled pattern that knows its program size, so the
// cost of matching it can be charged before it runs.
type boundedRegexp struct {
	*regexp.Regexp
	size int
}

// patternBudget is the regexp engine of one schema compile: Go's regexp
// (RE2: no backtracking), refusing a program over maxPatternSize and
// patterns over maxPatternTotal steps in all.
type patternBudget struct{ left int }

func newPatternBudget() *patternBudget { return &patternBudget{left: maxPatternTotal} }

func (p *patternBudget) compile(s string) (jsonschema.Regexp, error) {
	re, err := syntax.Parse(s, syntax.Perl)
	if err != nil {
		return nil, err
	}
	n := progSize(re, maxPatternSize+1)
	if n > maxPatternSize {
		return nil, fmt.Errorf("pattern is too complex: more than %d steps once repetitions are expanded", maxPatternSize)
	}
	if p.left -= n; p.left < 0 {
		return nil, fmt.Errorf("the schema's patterns are too complex together: more than %d steps in all", maxPatternTotal/2)
	}
	r, err := regexp.Compile(s)
	if err != nil {
		return nil, err
	}
	return boundedRegexp{Regexp: r, size: n}, nil
}

// progSize estimates the compiled program size of re, repetitions
// expanded, stopping at limit so the estimate itself stays cheap.
func progSize(re *syntax.Regexp, limit int) int {
	switch re.Op {
	case syntax.OpRepeat:
		n := re.Max
		if n < 0 {
			n = re.Min + 1
		}
		sub := progSize(re.Sub[0], limit)
		if sub > 0 && n > limit/sub {
			return limit
		}
		return min(limit, 1+n*sub)
	case syntax.OpConcat, syntax.OpAlternate, syntax.OpCapture, syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		total := 1
		for _, s := range re.Sub {
			total += progSize(s, limit)
			if total >= limit {
				return limit
			}
		}
		return total
	case syntax.OpLiteral:
		return max(1, len(re.Rune))
	}
	return 1
}

// regexFormat replaces the "regex" format (asserted by drafts before
// 2019-09): an input string is compiled as a pattern, so it gets the same
// bound as a schema's.
var regexFormat = &jsonschema.Format{Name: "regex", Validate: func(v any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	_, err := newPatternBudget().compile(s)
	return err
}}

// matchCost is what matching re against n bytes is charged, in units of
// about half a microsecond (one schema evaluation): Go's regexp takes up to
// about 8 ns per program step and byte (measured: BenchmarkValidateWorst's
// pattern-long), so 64 step-bytes make a unit.
func matchCost(re jsonschema.Regexp, n int) int {
	size := maxPatternSize
	if b, ok := re.(boundedRegexp); ok {
		size = b.size
	}
	return size * (n + 1) / 64
}
