package status_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// summary is a condition without its times, for comparisons.
type summary struct {
	Type, Status, Reason, Message string
	ObservedGeneration            int64
}

func summarize(conds []metav1.Condition) []summary {
	var out []summary
	for _, c := range conds {
		out = append(out, summary{c.Type, string(c.Status), c.Reason, c.Message, c.ObservedGeneration})
	}
	return out
}

func TestMark(t *testing.T) {
	// Every test starts from all three kstatus conditions and one of the
	// controller's own, which no Mark touches.
	start := func() *widget.Widget {
		return widgetWith(5,
			cond(status.Ready, metav1.ConditionUnknown, "Old", "old", 4, hourAgo),
			cond(status.Reconciling, metav1.ConditionTrue, "Old", "old", 4, hourAgo),
			cond(status.Stalled, metav1.ConditionTrue, "Old", "old", 4, hourAgo),
			cond("Available", metav1.ConditionTrue, "Old", "old", 4, hourAgo),
		)
	}
	available := summary{"Available", "True", "Old", "old", 4}
	tests := []struct {
		name string
		mark func(status.Setter, string, string) bool
		want []summary
	}{
		{"MarkReady", status.MarkReady, []summary{{"Ready", "True", "R", "m", 5}, available}},
		{"MarkReconciling", status.MarkReconciling, []summary{{"Ready", "Unknown", "R", "m", 5}, {"Reconciling", "True", "R", "m", 5}, available}},
		{"MarkNotReady", status.MarkNotReady, []summary{{"Ready", "False", "R", "m", 5}, {"Reconciling", "True", "R", "m", 5}, available}},
		{"MarkStalled", status.MarkStalled, []summary{{"Ready", "False", "R", "m", 5}, {"Stalled", "True", "R", "m", 5}, available}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := start()
			if !tt.mark(w, "R", "m") {
				t.Error("first call reported no change")
			}
			if diff := cmp.Diff(tt.want, summarize(w.Status.Conditions)); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if tt.mark(w, "R", "m") {
				t.Error("second identical call reported a change")
			}
		})
	}
}

func TestIsStalled(t *testing.T) {
	w := widgetWith(2)
	if status.IsTrue(w, status.Stalled) {
		t.Error("stalled without conditions")
	}
	status.MarkStalled(w, "Invalid", "bad")
	if !status.IsTrue(w, status.Stalled) || status.IsTrue(w, status.Ready) {
		t.Errorf("after MarkStalled: IsStalled %t IsReady %t", status.IsTrue(w, status.Stalled), status.IsTrue(w, status.Ready))
	}
}

func TestSetError(t *testing.T) {
	invalid := koperrors.Errorf(koperrors.Invalid, "spec.port 70000: must be at most 65535")
	tests := []struct {
		name    string
		err     error
		want    []summary
		wantOG  int64 // status.observedGeneration after; it starts at 1
		current bool
	}{{
		name:    "success",
		err:     nil,
		want:    []summary{{"Ready", "True", status.ReasonSucceeded, "", 5}},
		wantOG:  5,
		current: true,
	}, {
		name: "retryable error",
		err:  fmt.Errorf("fetch image: %w", koperrors.Errorf(koperrors.Unavailable, "registry down")),
		want: []summary{
			{"Ready", "False", "Unavailable", "fetch image: registry down", 5},
			{"Reconciling", "True", "Unavailable", "fetch image: registry down", 5},
		},
		wantOG: 1,
	}, {
		name: "unclassified error is Internal",
		err:  fmt.Errorf("boom"),
		want: []summary{
			{"Ready", "False", "Internal", "boom", 5},
			{"Reconciling", "True", "Internal", "boom", 5},
		},
		wantOG: 1,
	}, {
		name: "terminal error stalls and settles the generation",
		err:  koperrors.Terminal(invalid),
		want: []summary{
			{"Ready", "False", "Invalid", invalid.Error(), 5},
			{"Stalled", "True", "Invalid", invalid.Error(), 5},
		},
		wantOG:  5,
		current: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Start from a stalled object at an older generation, so every
			// outcome has something to replace.
			w := widgetWith(5, cond(status.Stalled, metav1.ConditionTrue, "Old", "old", 1, hourAgo))
			w.Status.ObservedGeneration = 1
			if !status.SetError(w, tt.err) {
				t.Error("SetError reported no change")
			}
			if diff := cmp.Diff(tt.want, summarize(w.Status.Conditions)); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if w.Status.ObservedGeneration != tt.wantOG {
				t.Errorf("observedGeneration %d, want %d", w.Status.ObservedGeneration, tt.wantOG)
			}
			if got := status.IsCurrent(w); got != tt.current {
				t.Errorf("IsCurrent = %t, want %t", got, tt.current)
			}
			if status.SetError(w, tt.err) {
				t.Error("the same outcome twice reported a change")
			}
		})
	}
}

func TestReasonOf(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{nil, ""},
		{koperrors.Errorf(koperrors.NotFound, "x"), "NotFound"},
		{koperrors.Terminal(koperrors.Errorf(koperrors.Forbidden, "x")), "Forbidden"},
		{fmt.Errorf("plain"), "Internal"},
	}
	for _, tt := range tests {
		if got := status.ReasonOf(tt.err); got != tt.want {
			t.Errorf("ReasonOf(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
