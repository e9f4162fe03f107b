package safety

import (
	"fmt"
	"strings"
)

// Explain says how the detector reads text, for the people who tune it:
// the tokens after normalising and repair with their concepts in brackets,
// the frames that fired, the context flags the model is gated on, and the
// verdict. It holds the user's text, so it is for development tools
// (vera-eval safety-explain), never for logs or metrics.
func (d *Detector) Explain(text string) string {
	x := &extractor{known: d.model.lex}
	x.run(text, nil, 2, 2, func([]byte) {})
	var b strings.Builder
	for i, tok := range x.cur {
		b.WriteString(tok)
		var names []string
		x.sets[i].each(func(c int) { names = append(names, conceptTable[c].name) })
		if len(names) > 0 {
			fmt.Fprintf(&b, "[%s]", strings.Join(names, ","))
		}
		b.WriteByte(' ')
	}
	r := d.Detect(text)
	return fmt.Sprintf("tokens: %s\nframes: %v\nflags: %+v\nverdict: %s %s\n", strings.TrimSpace(b.String()), x.fired, x.flags(), r.Level, r.Reason)
}
