package observability

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kopgo/kopgo/internal/truncate"
)

// What an Event is called and what it may say: the API server's limits.

// eventName is "<object name>.<time in hex>", the name client-go gives an
// Event, with the object name cut (and, if it is no DNS subdomain, cleaned)
// so that the whole stays a valid name of at most 253 characters.
func eventName(object string, t time.Time) string {
	suffix := fmt.Sprintf(".%x", t.UnixNano())
	name := object + suffix
	if len(validation.IsDNS1123Subdomain(name)) == 0 {
		return name
	}
	prefix := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		case r >= 'A' && r <= 'Z':
			return r + ('a' - 'A')
		}
		return '-'
	}, object)
	prefix = prefix[:min(len(prefix), validation.DNS1123SubdomainMaxLength-len(suffix))]
	prefix = strings.Trim(prefix, "-.")
	if name = prefix + suffix; prefix != "" && len(validation.IsDNS1123Subdomain(name)) == 0 {
		return name
	}
	return "event" + suffix
}

// maxNoteBytes is the API server's limit on an events.k8s.io/v1 note; a
// longer note gets the whole event refused, so nothing would be recorded.
const maxNoteBytes = 1024

// cutNote shortens note to maxNoteBytes, on a UTF-8 boundary, marking the
// cut with an ellipsis.
func cutNote(note string) string { return truncate.String(note, maxNoteBytes) }
