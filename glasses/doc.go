// Package glasses owns cards — safety resources, captions, approve/decline
// prompts and info — and how they are laid out, paged and rendered
// (display-op JSON and PNG) for a device surface, with a plain fallback
// layout for cards the fonts cannot draw (Engine.SafetyPages), and how the
// four keys page them (PageKey).
//
// Invariants (BRIEF §5–6):
//   - Nothing is ever truncated, ellipsised or dropped. Text that does not fit
//     a page goes to the next page; text that cannot be drawn (a glyph missing
//     from the font, a number wider than a line, a title longer than its
//     lines) is a returned error naming the rune/token, never silently cut.
//   - Every page carries the card title and "n/N" and stays inside the
//     surface's budget: lines per page, runes per line and measured pixel
//     width (real font metrics from the embedded Go fonts).
//   - Joining all pages' lines (JoinText) equals the card's source text under
//     NormalizeSpace, the one whitespace normalisation used everywhere.
//   - A number token is never split across lines or pages; phone numbers and
//     short codes ("116 123", "text HOME to 741741") are no-break spans.
//   - Safety cards keep resources in the given order, start each resource on
//     a new page where a resource fits a page (OnePerPage; on 4-line surfaces a
//     resource that fits a page is never split), keep an action's label with
//     its value, have no timeout and leave a surface only by an explicit Done
//     (PageKey: back on page 1 does nothing).
//
// Fonts: Go Regular and Go Bold (golang.org/x/image/font/gofont), parsed once.
// They cover the WGL4 repertoire: Latin (Basic, Latin-1, Extended-A), Greek
// and Cyrillic basics and common punctuation/arrows. Emoji, CJK, Arabic,
// Hebrew, Indic scripts, combining marks and zero-width characters are not
// covered and yield a *GlyphError. On firmware-font devices (Even G1/G2,
// MentraOS) the Go font measures an estimate of the firmware width and the
// per-line rune budget is the binding guard.
package glasses
