package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// join renders n items of f separated by commas.
func join(n int, f func(i int) string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = f(i)
	}
	return strings.Join(parts, ",")
}

// worstSchemas are accepted schemas at the default limits, each pushing
// one cost of compiling or checking to its bound.
func worstSchemas() map[string]string {
	lim := DefaultConfig()
	n := lim.MaxSchemaNodes - 3 // the root, its "object" and its keyword's container
	nest := func(pre, post string, d int) string {
		return strings.Repeat(pre, d) + "{}" + strings.Repeat(post, d)
	}
	return map[string]string{
		"properties":       `{"type":"object","properties":{` + join(n, func(i int) string { return fmt.Sprintf(`"p%d":{}`, i) }) + `}}`,
		"typed-properties": `{"type":"object","properties":{` + join(n/2, func(i int) string { return fmt.Sprintf(`"p%d":{"type":"string"}`, i) }) + `}}`,
		"anyOf":            `{"type":"object","anyOf":[` + join(n, func(int) string { return `{}` }) + `]}`,
		"deep-not":         `{"type":"object","properties":{"a":` + nest(`{"not":`, `}`, lim.MaxSchemaDepth-3) + `}}`,
		"deep-props":       nest(`{"type":"object","properties":{"a":`, `}}`, (lim.MaxSchemaDepth-1)/2),
		"ref-chain":        `{"type":"object","$ref":"#/$defs/d0","$defs":{` + join(n/2-1, func(i int) string { return fmt.Sprintf(`"d%d":{"$ref":"#/$defs/d%d"}`, i, i+1) }) + fmt.Sprintf(`,"d%d":{}}}`, n/2-1),
		"patterns":         `{"type":"object","patternProperties":{` + join(n/2, func(i int) string { return fmt.Sprintf(`"^p%d[a-z]{10}$":{}`, i) }) + `}}`,
		"big-patterns":     `{"type":"object","patternProperties":{` + join(maxPatternTotal/2/maxPatternSize, func(i int) string { return fmt.Sprintf(`"^p%d[a-z]{%d}$":{}`, i, maxPatternSize-10) }) + `}}`,
		"ids":              `{"type":"object","$defs":{` + join(n/2, func(i int) string { return fmt.Sprintf(`"d%d":{"$id":"urn:x%d"}`, i, i) }) + `}}`,
		"enum":             `{"type":"object","enum":[` + join(n, func(int) string { return `{}` }) + `]}`,
		"ref-fanout":       fanout(13),
	}
}

// fanout is a schema whose defs each apply the next one twice: 2^k
// evaluations of the last for one value.
func fanout(k int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{"a":{"$ref":"#/$defs/d0"}},"$defs":{`)
	for i := range k {
		fmt.Fprintf(&b, `"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
	}
	fmt.Fprintf(&b, `"d%d":{"type":"integer"}}}`, k)
	return b.String()
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCompileWorst compiles each worst accepted schema; cpu-ms/op is
// the process's CPU time per compile (GC included). Target: < 50.
//
//	go test -tags nolibopusfile -run XXX -bench CompileWorst -benchtime 20x ./gateway/tools/
func BenchmarkCompileWorst(b *testing.B) {
	lim := DefaultConfig().limits()
	for name, s := range worstSchemas() {
		b.Run(name, func(b *testing.B) {
			if _, err := compile(json.RawMessage(s), lim); err != nil {
				b.Fatalf("%s is refused: %v", name, err)
			}
			b.ReportAllocs()
			c0 := cpuTime(b)
			for b.Loop() {
				if _, err := compile(json.RawMessage(s), lim); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime(b)-c0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
}

// worstInputs are schemas and inputs that each push one cost of checking an
// input to the bound; "refused" ones pass it and are refused by the walk.
func worstInputs() map[string][2]string {
	long := strings.Repeat("a", 3000) + "0"
	obj := "{" + join(3000, func(i int) string { return fmt.Sprintf(`"k%d":1`, i) }) + "}"
	return map[string][2]string{
		"ref-fanout":        {fanout(13), `{"a":1}`},
		"refused-pattern":   {`{"type":"object","properties":{"s":{"type":"string","pattern":"[a-z]{990}0"}}}`, `{"s":"` + strings.Repeat("a", 24_000) + `0"}`},
		"pattern-long":      {`{"type":"object","properties":{"s":{"type":"string","pattern":"[a-z]{990}0"}}}`, `{"s":"` + long + `"}`},
		"additional-wide":   {`{"type":"object","additionalProperties":{"allOf":[{"type":"integer"},{"minimum":0},{"maximum":9}]}}`, obj},
		"pattern-props":     {`{"type":"object","patternProperties":{` + join(3, func(i int) string { return fmt.Sprintf(`"^k%d[0-9]{20}":{}`, i) }) + `}}`, obj},
		"refused-recursion": {`{"type":"object","$ref":"#/$defs/n","$defs":{"n":{"allOf":[{"$ref":"#/$defs/m"},{"$ref":"#/$defs/m"}]},"m":{"properties":{"x":{"$ref":"#/$defs/n"}}}}}`, strings.Repeat(`{"x":`, 30) + "1" + strings.Repeat("}", 30)},
	}
}

// BenchmarkValidateWorst checks each worst input; cpu-ms/op as above.
//
//	go test -tags nolibopusfile -run XXX -bench ValidateWorst -benchtime 20x ./gateway/tools/
func BenchmarkValidateWorst(b *testing.B) {
	lim := DefaultConfig().limits()
	for name, c := range worstInputs() {
		b.Run(name, func(b *testing.B) {
			sch, err := compile(json.RawMessage(c[0]), lim)
			if err != nil {
				b.Fatalf("%s: schema refused: %v", name, err)
			}
			err = validate(sch, json.RawMessage(c[1]), lim)
			if refused := err != nil && strings.Contains(err.Error(), "schema evaluations"); refused != strings.HasPrefix(name, "refused") || (err != nil && !refused) {
				b.Fatalf("%s: %v", name, err)
			}
			b.ReportAllocs()
			c0 := cpuTime(b)
			for b.Loop() {
				_ = validate(sch, json.RawMessage(c[1]), lim)
			}
			b.ReportMetric(float64(cpuTime(b)-c0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
}
