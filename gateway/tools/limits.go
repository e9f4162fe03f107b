package tools

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/veraneural/vera-gateway/gateway"
)

// Bounds on numbers in a schema or an input: the validator does exact
// rational arithmetic (math/big), and 1e1000000 costs tens of milliseconds
// per comparison.
const (
	maxNumberLen = 64
	maxExponent  = 400
)

// shapeLimits bounds one JSON document before anything decodes it.
type shapeLimits struct {
	root     string // "input_schema" or "input", for errors
	maxDepth int    // nesting of objects and arrays
	maxNodes int    // values (objects, arrays, strings, numbers, literals)
	depthKey string // the config key that sets maxDepth, named in errors
	nodesKey string // the config key that sets maxNodes, or ""
}

// frame is one open object or array of the scan, for the error's path.
type frame struct {
	array bool
	index int
	key   string
}

// scanShape checks raw's nesting depth, value count and number literals in
// one pass over the bytes, without decoding it: the work is linear in the
// size and bounded before the decoder or the compiler sees it. Malformed
// JSON is left for the decoder to report. Errors name the JSON pointer
// where the limit was crossed and the limit's config key.
func scanShape(raw []byte, lim shapeLimits) *PathError {
	var stack []frame
	nodes := 0
	value := func() {
		nodes++
		if n := len(stack); n > 0 && stack[n-1].array {
			stack[n-1].index++
		}
	}
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '"':
			end := gateway.JSONStringEnd(raw, i)
			if gateway.JSONIsKey(raw, end) {
				if n := len(stack); n > 0 {
					stack[n-1].key = string(raw[i+1 : max(i+1, end-1)])
				}
			} else {
				value()
			}
			i = end - 1
		case c == '{' || c == '[':
			value()
			stack = append(stack, frame{array: c == '[', index: -1})
			if len(stack) > lim.maxDepth {
				return &PathError{Root: lim.root, Path: pointer(stack[:len(stack)-1]),
					Message: fmt.Sprintf("is nested deeper than %d levels (%s)", lim.maxDepth, lim.depthKey)}
			}
		case c == '}' || c == ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case c == '-' || (c >= '0' && c <= '9'):
			j := i
			for j < len(raw) && strings.IndexByte("+-.eE0123456789", raw[j]) >= 0 {
				j++
			}
			value()
			if msg := checkNumber(string(raw[i:j])); msg != "" {
				return &PathError{Root: lim.root, Path: pointer(stack), Message: msg}
			}
			i = j - 1
		case c == 't' || c == 'f' || c == 'n':
			value()
			for i+1 < len(raw) && raw[i+1] >= 'a' && raw[i+1] <= 'z' {
				i++
			}
		}
		if nodes > lim.maxNodes {
			msg := fmt.Sprintf("has more than %d JSON values", lim.maxNodes)
			if lim.nodesKey != "" {
				msg += " (" + lim.nodesKey + ")"
			}
			return &PathError{Root: lim.root, Message: msg}
		}
	}
	return nil
}

// pointer renders the scan's open containers as a JSON pointer.
func pointer(stack []frame) string {
	var b strings.Builder
	for _, f := range stack {
		b.WriteByte('/')
		if f.array {
			b.WriteString(strconv.Itoa(max(f.index, 0)))
		} else {
			b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(f.key))
		}
	}
	return b.String()
}

// checkNumber bounds one number literal's length and exponent.
func checkNumber(lit string) string {
	if len(lit) > maxNumberLen {
		return fmt.Sprintf("has a number of more than %d characters", maxNumberLen)
	}
	if k := strings.IndexAny(lit, "eE"); k >= 0 {
		exp, err := strconv.Atoi(strings.TrimPrefix(lit[k+1:], "+"))
		if err != nil {
			return "" // malformed: the decoder reports it
		}
		if exp > maxExponent || exp < -maxExponent {
			return fmt.Sprintf("has a number with an exponent beyond ±%d", maxExponent)
		}
	}
	return ""
}
