// Package truncate shortens text to the byte limits the API server puts on
// fields (an event's note, a condition's message), shared by the
// observability and status packages.
package truncate

import "unicode/utf8"

// String cuts s to at most limit bytes at a character boundary, ending
// with "…" when it cut.
func String(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	const ellipsis = "…"
	cut := limit - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
