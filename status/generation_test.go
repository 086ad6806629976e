package status_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopgo/kopgo/status"
)

func TestIsCurrent(t *testing.T) {
	const T, F = metav1.ConditionTrue, metav1.ConditionFalse
	tests := []struct {
		name string
		obj  status.Getter
		want bool
	}{
		{"observedGeneration equal", withOG(widgetWith(3), 3), true},
		{"observedGeneration behind", withOG(widgetWith(3), 2), false},
		{"observedGeneration equal but no generation", withOG(widgetWith(0), 0), false},
		// With observedGeneration, conditions do not decide.
		{"observedGeneration behind, Ready at this generation", withOG(widgetWith(3, cond("Ready", T, "A", "", 3, hourAgo)), 2), false},
		{"no observedGeneration field: Ready at this generation", gadgetWith(3, cond("Ready", T, "A", "", 3, hourAgo)), true},
		{"no observedGeneration field: Stalled at this generation", gadgetWith(3, cond("Stalled", T, "A", "", 3, hourAgo)), true},
		{"no observedGeneration field: Ready for an older generation", gadgetWith(3, cond("Ready", T, "A", "", 2, hourAgo)), false},
		{"no observedGeneration field: Ready False at this generation", gadgetWith(3, cond("Ready", F, "A", "", 3, hourAgo)), false},
		{"no observedGeneration field: nothing", gadgetWith(3), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := status.IsCurrent(tt.obj); got != tt.want {
				t.Errorf("IsCurrent = %t, want %t", got, tt.want)
			}
		})
	}
}

func TestSetObservedGeneration(t *testing.T) {
	w := widgetWith(4)
	if !status.SetObservedGeneration(w) || w.Status.ObservedGeneration != 4 {
		t.Errorf("first call: observedGeneration %d, want 4 and a change", w.Status.ObservedGeneration)
	}
	if status.SetObservedGeneration(w) {
		t.Error("second call reported a change")
	}
	g := gadgetWith(4)
	if status.SetObservedGeneration(g) {
		t.Error("a type without observedGeneration reported a change")
	}
}

func withOG[T interface{ SetObservedGeneration(int64) }](obj T, og int64) T {
	obj.SetObservedGeneration(og)
	return obj
}

func gadgetWith(gen int64, conds ...metav1.Condition) *gadget {
	g := &gadget{ObjectMeta: metav1.ObjectMeta{Name: "g", Generation: gen}}
	g.Status.Conditions = conds
	return g
}
