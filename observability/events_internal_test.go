package observability

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// An Event's name is "<object name>.<hex time>" when that is a valid name,
// and still a valid name, of at most 253 characters, when it is not.
func TestEventName(t *testing.T) {
	at := time.Unix(0, 0x18ead217642afb6d)
	tests := []struct {
		object, want string
	}{
		{"web", "web.18ead217642afb6d"},
		{"a.b-c", "a.b-c.18ead217642afb6d"},
		{strings.Repeat("a", 253), strings.Repeat("a", 253-17) + ".18ead217642afb6d"},
		{strings.Repeat("a", 235) + ".b", strings.Repeat("a", 235) + ".18ead217642afb6d"}, // the cut ends on a dot
		{"system:controller:job", "system-controller-job.18ead217642afb6d"},               // a ClusterRole name
		{"Upper_Case", "upper-case.18ead217642afb6d"},
		{"é", "event.18ead217642afb6d"},
	}
	for _, tt := range tests {
		got := eventName(tt.object, at)
		if got != tt.want {
			t.Errorf("eventName(%.20q...) = %.40q..., want %.40q...", tt.object, got, tt.want)
		}
		if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
			t.Errorf("eventName(%.20q...) = %q: %v", tt.object, got, errs)
		}
	}
}

func TestCutNote(t *testing.T) {
	if got := cutNote("short"); got != "short" {
		t.Errorf("cutNote(short) = %q", got)
	}
	long := strings.Repeat("é", 1000) // 2000 bytes
	got := cutNote(long)
	if len(got) > maxNoteBytes || !strings.HasSuffix(got, "…") || !strings.HasPrefix(got, "éé") {
		t.Errorf("cutNote: %d bytes, %.10q...%q", len(got), got, got[len(got)-6:])
	}
}
