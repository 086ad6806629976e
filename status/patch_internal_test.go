package status

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// copied has a status type with a DeepCopy method, held by pointer.
type copied struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            *copiedStatus `json:"status,omitempty"`
}

type copiedStatus struct {
	Phase string      `json:"phase,omitempty"`
	At    metav1.Time `json:"at,omitempty"`
	Items []string    `json:"items,omitempty"`
}

func (in *copiedStatus) DeepCopy() *copiedStatus {
	if in == nil {
		return nil
	}
	out := *in
	in.At.DeepCopyInto(&out.At)
	out.Items = append([]string(nil), in.Items...)
	return &out
}

func (in *copied) DeepCopyObject() runtime.Object {
	out := *in
	in.DeepCopyInto(&out.ObjectMeta)
	out.Status = in.Status.DeepCopy()
	return &out
}

// plain has a status struct without a DeepCopy method.
type plain struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            plainStatus `json:"status,omitempty"`
}

type plainStatus struct {
	Phase string `json:"phase,omitempty"`
}

func (in *plain) DeepCopyObject() runtime.Object {
	out := *in
	in.DeepCopyInto(&out.ObjectMeta)
	return &out
}

// The typed snapshot decides "unchanged" without converting anything, and
// hands every other case to the JSON comparison, whose answers it never
// changes: a time that moved below the second the API keeps is unchanged,
// a status that appears or changes is sent.
func TestPatcherTypedSnapshot(t *testing.T) {
	second := metav1.NewTime(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))
	newObj := func() *copied {
		o := &copied{Status: &copiedStatus{Phase: "Running", At: second, Items: []string{"a"}}}
		o.SetUID(types.UID("typed-snapshot"))
		o.SetResourceVersion("7")
		return o
	}

	o := newObj()
	p := NewPatcher(o)
	if !p.typed.IsValid() || p.converted {
		t.Fatalf("a status type with DeepCopy was converted at the snapshot (typed %v, converted %t)", p.typed.IsValid(), p.converted)
	}
	o.Status.Items[0] = "changed in place"
	if p.unchangedTyped(o) {
		t.Error("a change inside a slice compared unchanged: the snapshot shares it")
	}
	o.Status.Items[0] = "a"
	if sent, err := p.Patch(context.Background(), nil, o); sent || err != nil {
		t.Errorf("unchanged status: Patch = %t, %v; want nothing sent", sent, err)
	}
	if p.converted {
		t.Error("an unchanged typed status was converted to unstructured")
	}

	o = newObj()
	p = NewPatcher(o)
	o.Status.At = metav1.NewTime(second.Add(400 * time.Millisecond))
	if p.unchangedTyped(o) {
		t.Error("a time 400ms later compared equal as a typed value")
	}
	if sent, err := p.Patch(context.Background(), nil, o); sent || err != nil {
		t.Errorf("a time moved below the second: Patch = %t, %v; want nothing sent (the API keeps seconds)", sent, err)
	}

	for name, change := range map[string]func(*copied){
		"phase":       func(o *copied) { o.Status.Phase = "Failed" },
		"item":        func(o *copied) { o.Status.Items[0] = "b" },
		"status gone": func(o *copied) { o.Status = nil },
	} {
		o = newObj()
		p = NewPatcher(o)
		change(o)
		if p.unchangedTyped(o) {
			t.Errorf("%s changed, but compared unchanged as a typed value", name)
		}
		before, err := p.snapshot()
		if err != nil {
			t.Fatal(err)
		}
		after, err := statusOf(o)
		if err != nil {
			t.Fatal(err)
		}
		if !p.mustSend(before, after) {
			t.Errorf("%s changed: not sent", name)
		}
	}

	// No status at the snapshot, one now.
	o = newObj()
	o.Status = nil
	p = NewPatcher(o)
	o.Status = &copiedStatus{Phase: "Running"}
	if p.unchangedTyped(o) {
		t.Error("a status that appeared compared unchanged")
	}
	if before, _ := p.snapshot(); before != nil {
		t.Errorf("snapshot of no status = %v, want nil", before)
	}
}

// A status type without DeepCopy is snapshotted as unstructured data, as
// before the typed snapshot existed.
func TestPatcherWithoutDeepCopy(t *testing.T) {
	o := &plain{Status: plainStatus{Phase: "Running"}}
	o.SetUID("plain-snapshot")
	p := NewPatcher(o)
	if !p.converted || p.typed.IsValid() {
		t.Fatalf("snapshot: converted %t, typed %v; want converted", p.converted, p.typed.IsValid())
	}
	if sent, err := p.Patch(context.Background(), nil, o); sent || err != nil {
		t.Errorf("unchanged: Patch = %t, %v; want nothing sent", sent, err)
	}
	o.Status.Phase = "Failed"
	after, err := statusOf(o)
	if err != nil {
		t.Fatal(err)
	}
	if !p.mustSend(p.before, after) {
		t.Error("changed phase: not sent")
	}
}

// A pending write of this process makes the typed shortcut step aside:
// the read may predate that write.
func TestPatcherTypedSnapshotDefersToTheWriteLog(t *testing.T) {
	o := &copied{Status: &copiedStatus{Phase: "Running"}}
	o.SetUID("typed-pending")
	o.SetResourceVersion("3")
	writes.put(lastWrite{uid: "typed-pending", resourceVersion: "4", older: []string{"2"}, status: map[string]any{"phase": "Failed"}})
	defer writes.forget("typed-pending")
	p := NewPatcher(o)
	if p.unchangedTyped(o) {
		t.Fatal("unchanged with a write pending: the shortcut skipped the write log")
	}
	before, _ := p.snapshot()
	after, _ := statusOf(o)
	if !p.mustSend(before, after) {
		t.Error("the read predates a write of another status: not sent")
	}
}

// Unchanged is the shortcut alone: true only for an unchanged typed status
// with nothing pending, and never for another object.
func TestPatcherUnchanged(t *testing.T) {
	o := &copied{Status: &copiedStatus{Phase: "Running"}}
	o.SetUID("unchanged-check")
	p := NewPatcher(o)
	if !p.Unchanged(o) {
		t.Error("unchanged typed status: Unchanged = false")
	}
	other := o.DeepCopyObject().(*copied)
	other.SetUID("another-object")
	if p.Unchanged(other) {
		t.Error("an object of another UID: Unchanged = true")
	}
	o.Status.Phase = "Failed"
	if p.Unchanged(o) {
		t.Error("changed phase: Unchanged = true")
	}
	o.Status.Phase = "Running"
	writes.put(lastWrite{uid: "unchanged-check", resourceVersion: "4", status: map[string]any{"phase": "Failed"}})
	defer writes.forget("unchanged-check")
	if p.Unchanged(o) {
		t.Error("a write of this process pending: Unchanged = true")
	}
	pl := &plain{Status: plainStatus{Phase: "Running"}}
	if NewPatcher(pl).Unchanged(pl) {
		t.Error("a status type without DeepCopy: Unchanged = true (it cannot tell without converting)")
	}
}

// A converged reconcile's status work: snapshot, then Patch of the same
// status. The typed snapshot against the JSON one (a status type without
// DeepCopy).
func BenchmarkPatcherUnchanged(b *testing.B) {
	conds := []metav1.Condition{
		{Type: Ready, Status: metav1.ConditionTrue, Reason: "Succeeded", Message: "3 of 3 children ready", LastTransitionTime: metav1.Now()},
		{Type: Reconciling, Status: metav1.ConditionFalse, Reason: "Succeeded", LastTransitionTime: metav1.Now()},
	}
	b.Run("typed", func(b *testing.B) {
		o := &copied{Status: &copiedStatus{Phase: "Running", At: metav1.Now(), Items: []string{"a", "b", "c"}}}
		o.SetUID("bench-typed")
		b.ReportAllocs()
		for b.Loop() {
			if sent, err := NewPatcher(o).Patch(context.Background(), nil, o); sent || err != nil {
				b.Fatal(sent, err)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		o := &plainConds{Status: plainCondsStatus{Phase: "Running", Conditions: conds}}
		o.SetUID("bench-json")
		b.ReportAllocs()
		for b.Loop() {
			if sent, err := NewPatcher(o).Patch(context.Background(), nil, o); sent || err != nil {
				b.Fatal(sent, err)
			}
		}
	})
	b.Run("typed with conditions", func(b *testing.B) {
		o := &condsCopied{Status: condsCopiedStatus{Phase: "Running", Conditions: conds}}
		o.SetUID("bench-typed-conds")
		b.ReportAllocs()
		for b.Loop() {
			if sent, err := NewPatcher(o).Patch(context.Background(), nil, o); sent || err != nil {
				b.Fatal(sent, err)
			}
		}
	})
}

// plainConds has conditions in a status type without DeepCopy.
type plainConds struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            plainCondsStatus `json:"status,omitempty"`
}

type plainCondsStatus struct {
	Phase      string             `json:"phase,omitempty"`
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

func (in *plainConds) DeepCopyObject() runtime.Object { out := *in; return &out }

// condsCopied is plainConds whose status type has DeepCopy.
type condsCopied struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            condsCopiedStatus `json:"status,omitempty"`
}

type condsCopiedStatus plainCondsStatus

func (in *condsCopiedStatus) DeepCopy() *condsCopiedStatus {
	out := *in
	out.Conditions = make([]metav1.Condition, len(in.Conditions))
	for i := range in.Conditions {
		in.Conditions[i].DeepCopyInto(&out.Conditions[i])
	}
	return &out
}

func (in *condsCopied) DeepCopyObject() runtime.Object { out := *in; return &out }
