package status

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	koperrors "github.com/kopgo/kopgo/errors"
)

// Ready's lastTransitionTime says since when the object has not been
// Ready: moving between False and Unknown keeps it, through Finish and
// through Set (MarkReconciling), so that a restarted operator reads the
// same "not Ready since" from the object; True and back moves it.
func TestReadyKeepsItsTransitionWhileNotReady(t *testing.T) {
	hourAgo := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	failed := []metav1.Condition{
		{Type: Ready, Status: metav1.ConditionFalse, Reason: "Unavailable", LastTransitionTime: hourAgo},
		{Type: Reconciling, Status: metav1.ConditionTrue, Reason: "Unavailable", LastTransitionTime: hourAgo},
	}
	rollingOut := []metav1.Condition{
		{Type: Ready, Status: metav1.ConditionUnknown, Reason: "RollingOut", LastTransitionTime: hourAgo},
		{Type: Reconciling, Status: metav1.ConditionTrue, Reason: "RollingOut", LastTransitionTime: hourAgo},
	}
	tests := map[string]struct {
		read       []metav1.Condition
		reconcile  func(*obj) error
		wantStatus metav1.ConditionStatus
		wantKept   bool
	}{
		"False -> Unknown (MarkReconciling)": {failed, func(o *obj) error {
			MarkReconciling(o, "RollingOut", "1 of 3 updated")
			return nil
		}, metav1.ConditionUnknown, true},
		"Unknown -> False (a retried error)": {rollingOut, func(*obj) error {
			return koperrors.Errorf(koperrors.Unavailable, "registry down")
		}, metav1.ConditionFalse, true},
		"Unknown -> False (a terminal error)": {rollingOut, func(*obj) error {
			return koperrors.Terminal(koperrors.Errorf(koperrors.Invalid, "spec.size: bad"))
		}, metav1.ConditionFalse, true},
		"False -> True": {failed, func(*obj) error { return nil }, metav1.ConditionTrue, false},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			o := &obj{conds: append([]metav1.Condition(nil), tt.read...)}
			o.SetGeneration(1)
			read := Begin(o)
			Finish(o, read, tt.reconcile(o))
			r := Get(o, Ready)
			if r == nil || r.Status != tt.wantStatus {
				t.Fatalf("Ready = %+v, want status %s", r, tt.wantStatus)
			}
			if kept := r.LastTransitionTime.Equal(&hourAgo); kept != tt.wantKept {
				t.Errorf("Ready's lastTransitionTime %v, kept from an hour ago: %v, want %v", r.LastTransitionTime, kept, tt.wantKept)
			}
		})
	}
	t.Run("Set alone", func(t *testing.T) {
		o := &obj{conds: append([]metav1.Condition(nil), failed...)}
		MarkReconciling(o, "RollingOut", "")
		if r := Get(o, Ready); r.Status != metav1.ConditionUnknown || !r.LastTransitionTime.Equal(&hourAgo) {
			t.Errorf("Ready = %+v, want Unknown since an hour ago", r)
		}
	})
}
