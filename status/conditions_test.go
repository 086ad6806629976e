package status_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

var (
	hourAgo = metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	dayAgo  = metav1.NewTime(time.Now().Add(-24 * time.Hour).Truncate(time.Second))
)

func cond(t string, s metav1.ConditionStatus, reason, msg string, gen int64, ltt metav1.Time) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg, ObservedGeneration: gen, LastTransitionTime: ltt}
}

func widgetWith(gen int64, conds ...metav1.Condition) *widget.Widget {
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Generation: gen}}
	w.Status.Conditions = conds
	return w
}

// recent reports whether a transition time was stamped by this test run.
func recent(ltt metav1.Time) bool { return time.Since(ltt.Time) < time.Minute }

func TestSet(t *testing.T) {
	const T, F, U = metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown
	tests := []struct {
		name        string
		existing    []metav1.Condition
		gen         int64
		set         metav1.Condition
		wantChanged bool
		want        []metav1.Condition // LastTransitionTime zero here means "stamped now"
	}{{
		name:        "new condition gets the generation and a transition time",
		gen:         3,
		set:         cond("Ready", T, "Deployed", "ok", 0, metav1.Time{}),
		wantChanged: true,
		want:        []metav1.Condition{cond("Ready", T, "Deployed", "ok", 3, metav1.Time{})},
	}, {
		name:        "observedGeneration given by the caller is replaced",
		gen:         3,
		set:         cond("Ready", T, "Deployed", "ok", 99, hourAgo),
		wantChanged: true,
		want:        []metav1.Condition{cond("Ready", T, "Deployed", "ok", 3, hourAgo)},
	}, {
		name:        "same condition is no change",
		existing:    []metav1.Condition{cond("Ready", T, "Deployed", "ok", 3, hourAgo)},
		gen:         3,
		set:         cond("Ready", T, "Deployed", "ok", 0, metav1.Time{}),
		wantChanged: false,
		want:        []metav1.Condition{cond("Ready", T, "Deployed", "ok", 3, hourAgo)},
	}, {
		name:        "message change keeps lastTransitionTime",
		existing:    []metav1.Condition{cond("Ready", F, "Waiting", "1/3", 3, hourAgo)},
		gen:         3,
		set:         cond("Ready", F, "Waiting", "2/3", 0, metav1.Time{}),
		wantChanged: true,
		want:        []metav1.Condition{cond("Ready", F, "Waiting", "2/3", 3, hourAgo)},
	}, {
		name:        "reason change keeps lastTransitionTime",
		existing:    []metav1.Condition{cond("Ready", F, "Waiting", "1/3", 3, hourAgo)},
		gen:         3,
		set:         cond("Ready", F, "Failed", "1/3", 0, metav1.Time{}),
		wantChanged: true,
		want:        []metav1.Condition{cond("Ready", F, "Failed", "1/3", 3, hourAgo)},
	}, {
		name:        "new generation keeps lastTransitionTime",
		existing:    []metav1.Condition{cond("Ready", T, "Deployed", "ok", 3, hourAgo)},
		gen:         4,
		set:         cond("Ready", T, "Deployed", "ok", 0, metav1.Time{}),
		wantChanged: true,
		want:        []metav1.Condition{cond("Ready", T, "Deployed", "ok", 4, hourAgo)},
	}, {
		name:        "status change moves lastTransitionTime",
		existing:    []metav1.Condition{cond("Ready", U, "Progressing", "", 3, hourAgo)},
		gen:         3,
		set:         cond("Ready", T, "Deployed", "", 0, metav1.Time{}),
		wantChanged: true,
		want:        []metav1.Condition{cond("Ready", T, "Deployed", "", 3, metav1.Time{})},
	}, {
		name:        "status change takes the caller's transition time",
		existing:    []metav1.Condition{cond("Ready", U, "Progressing", "", 3, dayAgo)},
		gen:         3,
		set:         cond("Ready", T, "Deployed", "", 0, hourAgo),
		wantChanged: true,
		want:        []metav1.Condition{cond("Ready", T, "Deployed", "", 3, hourAgo)},
	}, {
		name: "kstatus types first, then the rest sorted",
		existing: []metav1.Condition{
			cond("Zeta", T, "A", "", 3, hourAgo), cond("Stalled", T, "A", "", 3, hourAgo), cond("Alpha", T, "A", "", 3, hourAgo),
		},
		gen:         3,
		set:         cond("Ready", F, "A", "", 0, hourAgo),
		wantChanged: true,
		want: []metav1.Condition{
			cond("Ready", F, "A", "", 3, hourAgo), cond("Stalled", T, "A", "", 3, hourAgo),
			cond("Alpha", T, "A", "", 3, hourAgo), cond("Zeta", T, "A", "", 3, hourAgo),
		},
	}, {
		name:        "conditions out of order are a change even if the condition is not",
		existing:    []metav1.Condition{cond("Alpha", T, "A", "", 3, hourAgo), cond("Ready", T, "A", "", 3, hourAgo)},
		gen:         3,
		set:         cond("Ready", T, "A", "", 0, metav1.Time{}),
		wantChanged: true,
		want:        []metav1.Condition{cond("Ready", T, "A", "", 3, hourAgo), cond("Alpha", T, "A", "", 3, hourAgo)},
	}, {
		name:        "empty reason becomes Unspecified",
		gen:         1,
		set:         cond("Ready", T, "", "", 0, hourAgo),
		wantChanged: true,
		want:        []metav1.Condition{cond("Ready", T, status.ReasonUnspecified, "", 1, hourAgo)},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := widgetWith(tt.gen, tt.existing...)
			existing := append([]metav1.Condition(nil), tt.existing...)
			if got := status.Set(w, tt.set); got != tt.wantChanged {
				t.Errorf("Set reported change %t, want %t", got, tt.wantChanged)
			}
			got := w.Status.Conditions
			for i := range tt.want {
				if i < len(got) && tt.want[i].LastTransitionTime.IsZero() {
					if !recent(got[i].LastTransitionTime) {
						t.Errorf("%s lastTransitionTime %v, want now", got[i].Type, got[i].LastTransitionTime)
					}
					got[i].LastTransitionTime = metav1.Time{}
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(existing, tt.existing); diff != "" {
				t.Errorf("Set modified the slice it was given (-before +after):\n%s", diff)
			}
		})
	}
}

func TestSetTruncatesMessage(t *testing.T) {
	tests := []struct {
		name    string
		message string
		want    string
	}{
		{"at the limit", strings.Repeat("x", status.MaxMessageBytes), strings.Repeat("x", status.MaxMessageBytes)},
		{"one byte over", strings.Repeat("x", status.MaxMessageBytes+1), strings.Repeat("x", status.MaxMessageBytes-3) + "…"},
		// 2-byte runes: the cut must not split one.
		{"multibyte", strings.Repeat("é", status.MaxMessageBytes), strings.Repeat("é", (status.MaxMessageBytes-3)/2) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := widgetWith(1)
			status.Set(w, cond(status.Ready, metav1.ConditionFalse, "Failed", tt.message, 0, hourAgo))
			got := status.Get(w, status.Ready).Message
			if len(got) > status.MaxMessageBytes || !utf8.ValidString(got) {
				t.Errorf("message of %d bytes (valid UTF-8: %t), want at most %d", len(got), utf8.ValidString(got), status.MaxMessageBytes)
			}
			if got != tt.want {
				t.Errorf("message is %d bytes ending %q, want %d bytes", len(got), got[max(0, len(got)-8):], len(tt.want))
			}
		})
	}
}

func TestRemoveAndGet(t *testing.T) {
	w := widgetWith(2, cond(status.Ready, metav1.ConditionTrue, "A", "", 2, hourAgo), cond(status.Stalled, metav1.ConditionTrue, "B", "", 2, hourAgo))
	if c := status.Get(w, status.Stalled); c == nil || c.Reason != "B" {
		t.Fatalf("Get(Stalled) = %+v", c)
	}
	if status.Get(w, "Missing") != nil {
		t.Error("Get of a missing type is not nil")
	}
	if !status.Remove(w, status.Stalled) {
		t.Error("Remove of a present condition reported no change")
	}
	if status.Remove(w, status.Stalled) {
		t.Error("Remove of an absent condition reported a change")
	}
	if diff := cmp.Diff([]metav1.Condition{cond(status.Ready, metav1.ConditionTrue, "A", "", 2, hourAgo)}, w.Status.Conditions); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
}

func TestIsTrue(t *testing.T) {
	tests := []struct {
		name  string
		gen   int64
		conds []metav1.Condition
		want  bool
	}{
		{"true at this generation", 2, []metav1.Condition{cond("Ready", metav1.ConditionTrue, "A", "", 2, hourAgo)}, true},
		{"true for an older generation", 3, []metav1.Condition{cond("Ready", metav1.ConditionTrue, "A", "", 2, hourAgo)}, false},
		{"true without observedGeneration", 3, []metav1.Condition{cond("Ready", metav1.ConditionTrue, "A", "", 0, hourAgo)}, false},
		{"false", 2, []metav1.Condition{cond("Ready", metav1.ConditionFalse, "A", "", 2, hourAgo)}, false},
		{"unknown", 2, []metav1.Condition{cond("Ready", metav1.ConditionUnknown, "A", "", 2, hourAgo)}, false},
		{"absent", 2, nil, false},
		{"object without generation", 0, []metav1.Condition{cond("Ready", metav1.ConditionTrue, "A", "", 0, hourAgo)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := status.IsTrue(widgetWith(tt.gen, tt.conds...), status.Ready); got != tt.want {
				t.Errorf("IsReady = %t, want %t", got, tt.want)
			}
		})
	}
}

func TestLess(t *testing.T) {
	got := []string{"Zeta", status.Stalled, "Alpha", status.Reconciling, status.Ready, "Available"}
	// Insertion sort with Less, to test Less alone.
	for i := 1; i < len(got); i++ {
		for j := i; j > 0 && status.Less(got[j], got[j-1]); j-- {
			got[j], got[j-1] = got[j-1], got[j]
		}
	}
	if diff := cmp.Diff([]string{"Ready", "Reconciling", "Stalled", "Alpha", "Available", "Zeta"}, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}
