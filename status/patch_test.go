package status_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/apply"
	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// reconcileStatus is what a reconciler of Widgets computes every time.
func reconcileStatus(w *widget.Widget) {
	status.MarkReady(w, "Deployed", "3/3 replicas ready")
	w.Status.Phase = "Running"
	status.SetObservedGeneration(w)
}

// watchFrom starts a watch of the Widgets in w's namespace after
// resourceVersion rv.
func watchFrom(t *testing.T, w *widget.Widget, rv string) watch.Interface {
	t.Helper()
	wc, err := client.NewWithWatch(cluster.Config, client.Options{Scheme: cluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	events, err := wc.Watch(t.Context(), &widget.WidgetList{}, client.InNamespace(w.Namespace),
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(events.Stop)
	return events
}

// The acceptance test: the same status patched 100 times sends one
// write, then no request, no new resourceVersion and no watch event. A
// change afterwards costs one request and one event, which proves the
// counters and the watch see what they should.
func TestPatchUnchangedSendsNothing(t *testing.T) {
	w := newWidget(t, "w")
	c, requests := countingClient(t, w)

	p := status.NewPatcher(w)
	reconcileStatus(w)
	if sent, err := p.Patch(t.Context(), c, w, client.FieldOwner(owner)); err != nil || !sent {
		t.Fatalf("first Patch = %t, %v; want a write", sent, err)
	}
	stored := read(t, w)
	rv := stored.ResourceVersion
	events := watchFrom(t, w, rv)
	requests.Store(0)

	for i := range 100 {
		obj := stored.DeepCopyObject().(*widget.Widget) // as a reconcile reads it
		p := status.NewPatcher(obj)
		reconcileStatus(obj)
		if sent, err := p.Patch(t.Context(), c, obj, client.FieldOwner(owner)); err != nil || sent {
			t.Fatalf("Patch %d of an unchanged status = %t, %v; want nothing sent", i, sent, err)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests for 100 unchanged patches, want 0", n)
	}
	if got := read(t, w).ResourceVersion; got != rv {
		t.Errorf("resourceVersion moved from %s to %s", rv, got)
	}
	select {
	case ev := <-events.ResultChan():
		t.Errorf("watch event %s after unchanged patches, want none", ev.Type)
	case <-time.After(time.Second):
	}

	requests.Store(0)
	obj := stored.DeepCopyObject().(*widget.Widget)
	p = status.NewPatcher(obj)
	reconcileStatus(obj)
	obj.Status.Phase = "Degraded"
	if sent, err := p.Patch(t.Context(), c, obj, client.FieldOwner(owner)); err != nil || !sent {
		t.Fatalf("Patch of a changed status = %t, %v; want a write", sent, err)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests for one change, want 1", n)
	}
	select {
	case ev := <-events.ResultChan():
		if got, ok := ev.Object.(*widget.Widget); ev.Type != watch.Modified || !ok || got.Status.Phase != "Degraded" {
			t.Errorf("watch event %s %T, want Modified with phase Degraded", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Error("no watch event for a status change")
	}
	if obj.ResourceVersion == rv || obj.ResourceVersion != read(t, w).ResourceVersion {
		t.Errorf("obj's resourceVersion %s after the write, want the server's new one", obj.ResourceVersion)
	}
}

// observed is what a user sees of a Widget's status, without times.
type observed struct {
	Generation, ObservedGeneration int64
	Phase                          string
	Conditions                     []summary
}

func observe(w *widget.Widget) observed {
	return observed{w.Generation, w.Status.ObservedGeneration, w.Status.Phase, summarize(w.Status.Conditions)}
}

// Scalars and conditions travel together: changing one never drops the
// other, a condition or field no longer set goes, every write is one
// request, and no status write bumps the generation.
func TestPatchWritesFieldsTogether(t *testing.T) {
	w := newWidget(t, "w")
	c, requests := countingClient(t, w)
	steps := []struct {
		name   string
		change func(*widget.Widget)
		want   observed
	}{{
		name: "conditions and scalars at once",
		change: func(w *widget.Widget) {
			status.MarkReconciling(w, "Progressing", "rolling out")
			w.Status.Phase = "Pending"
		},
		want: observed{1, 0, "Pending", []summary{
			{"Ready", "Unknown", "Progressing", "rolling out", 1}, {"Reconciling", "True", "Progressing", "rolling out", 1},
		}},
	}, {
		name:   "a scalar alone keeps the conditions",
		change: func(w *widget.Widget) { w.Status.Phase = "Running" },
		want: observed{1, 0, "Running", []summary{
			{"Ready", "Unknown", "Progressing", "rolling out", 1}, {"Reconciling", "True", "Progressing", "rolling out", 1},
		}},
	}, {
		name: "conditions alone keep the scalars; a removed condition goes",
		change: func(w *widget.Widget) {
			status.MarkReady(w, "Deployed", "3/3")
			status.SetObservedGeneration(w)
		},
		want: observed{1, 1, "Running", []summary{{"Ready", "True", "Deployed", "3/3", 1}}},
	}, {
		name:   "a cleared scalar goes",
		change: func(w *widget.Widget) { w.Status.Phase = "" },
		want:   observed{1, 1, "", []summary{{"Ready", "True", "Deployed", "3/3", 1}}},
	}, {
		name: "another condition type joins, sorted after Ready",
		change: func(w *widget.Widget) {
			status.Set(w, metav1.Condition{Type: "Available", Status: metav1.ConditionTrue, Reason: "MinimumReplicas", Message: "3"})
		},
		want: observed{1, 1, "", []summary{{"Ready", "True", "Deployed", "3/3", 1}, {"Available", "True", "MinimumReplicas", "3", 1}}},
	}}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			obj := read(t, w)
			p := status.NewPatcher(obj)
			s.change(obj)
			requests.Store(0)
			if sent, err := p.Patch(t.Context(), c, obj, client.FieldOwner(owner)); err != nil || !sent {
				t.Fatalf("Patch = %t, %v; want a write", sent, err)
			}
			if n := requests.Load(); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
			if diff := cmp.Diff(s.want, observe(read(t, w))); diff != "" {
				t.Errorf("stored status (-want +got):\n%s", diff)
			}
		})
	}
	owned := false
	for _, mf := range read(t, w).ManagedFields {
		if mf.Manager == owner {
			owned = mf.Operation == metav1.ManagedFieldsOperationApply && mf.Subresource == "status"
		}
	}
	if !owned {
		t.Errorf("no Apply entry for %s on the status subresource in managedFields", owner)
	}
}

// lastTransitionTime survives a round trip through the API server when
// only the message or reason changes, and moves when the status does.
func TestPatchKeepsTransitionTime(t *testing.T) {
	w := newWidget(t, "w")
	c := cluster.Client()
	p := status.NewPatcher(w)
	status.Set(w, metav1.Condition{Type: status.Ready, Status: metav1.ConditionFalse, Reason: "Waiting", Message: "1/3", LastTransitionTime: hourAgo})
	if _, err := p.Patch(t.Context(), c, w, client.FieldOwner(owner)); err != nil {
		t.Fatal(err)
	}
	kept := func(ltt metav1.Time) bool { return ltt.Equal(&hourAgo) }
	steps := []struct {
		name    string
		change  func(*widget.Widget)
		wantLTT func(metav1.Time) bool
	}{
		{"message only", func(w *widget.Widget) { status.MarkNotReady(w, "Waiting", "2/3") }, kept},
		{"reason only", func(w *widget.Widget) { status.MarkNotReady(w, "Degraded", "2/3") }, kept},
		{"status", func(w *widget.Widget) { status.MarkReady(w, "Deployed", "3/3") }, recent},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			obj := read(t, w)
			p := status.NewPatcher(obj)
			s.change(obj)
			if sent, err := p.Patch(t.Context(), c, obj, client.FieldOwner(owner)); err != nil || !sent {
				t.Fatalf("Patch = %t, %v; want a write", sent, err)
			}
			if got := status.Get(read(t, w), status.Ready).LastTransitionTime; !s.wantLTT(got) {
				t.Errorf("lastTransitionTime %v (it was %v)", got, hourAgo)
			}
		})
	}
}

// A read that predates this process' own last write (a lagging cache)
// must not hide a write; a read that includes it costs nothing.
func TestPatchStaleRead(t *testing.T) {
	w := newWidget(t, "w")
	c, requests := countingClient(t, w)
	stale := w.DeepCopyObject().(*widget.Widget) // read before our write, status empty
	// A reconcile that computes the same status from any read, times included.
	compute := func(w *widget.Widget) {
		status.Set(w, metav1.Condition{Type: status.Ready, Status: metav1.ConditionTrue, Reason: "Deployed", LastTransitionTime: hourAgo})
		w.Status.Phase = "Running"
	}

	p := status.NewPatcher(w)
	compute(w)
	if _, err := p.Patch(t.Context(), c, w, client.FieldOwner(owner)); err != nil {
		t.Fatal(err)
	}

	// Someone else changes the object, not its status: the fresh read is
	// newer than our write and includes it.
	fresh := read(t, w)
	fresh.Labels = map[string]string{"touched": "yes"}
	if err := cluster.Client().Update(t.Context(), fresh); err != nil {
		t.Fatal(err)
	}
	fresh = read(t, w)
	requests.Store(0)
	p = status.NewPatcher(fresh)
	compute(fresh)
	if sent, err := p.Patch(t.Context(), c, fresh, client.FieldOwner(owner)); err != nil || sent {
		t.Errorf("Patch of a newer read with our status = %t, %v; want nothing sent", sent, err)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests, want 0", n)
	}

	// The stale read (the very version our write was based on), and the
	// reconcile computes what we wrote: the write already holds it, so
	// nothing is sent, though the read differs. When the cache catches up,
	// its event brings a read that includes the write.
	obj := stale.DeepCopyObject().(*widget.Widget)
	p = status.NewPatcher(obj)
	compute(obj)
	requests.Store(0)
	if sent, err := p.Patch(t.Context(), c, obj, client.FieldOwner(owner)); err != nil || sent {
		t.Errorf("Patch after a stale read of what we wrote = %t, %v; want nothing sent", sent, err)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests, want 0", n)
	}

	// The stale read, and the reconcile computes the status it saw (none),
	// which differs from what we wrote: comparing with the read alone would
	// skip this write.
	p = status.NewPatcher(stale)
	if sent, err := p.Patch(t.Context(), c, stale, client.FieldOwner(owner)); err != nil || !sent {
		t.Fatalf("Patch after a stale read = %t, %v; want a write", sent, err)
	}
	if got := observe(read(t, w)); got.Phase != "" || len(got.Conditions) != 0 {
		t.Errorf("stored status %+v, want the status computed from the stale read (none)", got)
	}
}

// Patch works on unstructured objects the same way.
func TestPatchUnstructured(t *testing.T) {
	w := newWidget(t, "w")
	c := cluster.Client()
	get := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(widget.GroupVersion.WithKind("Widget"))
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(w), u); err != nil {
			t.Fatal(err)
		}
		return u
	}
	for i, want := range []bool{true, false} {
		u := get()
		p := status.NewPatcher(u)
		if err := unstructured.SetNestedField(u.Object, "Running", "status", "phase"); err != nil {
			t.Fatal(err)
		}
		sent, err := p.Patch(t.Context(), c, u, client.FieldOwner(owner))
		if err != nil || sent != want {
			t.Errorf("Patch %d = %t, %v; want %t", i, sent, err, want)
		}
	}
	if got := read(t, w).Status.Phase; got != "Running" {
		t.Errorf("phase %q, want Running", got)
	}
}

func TestPatchDryRun(t *testing.T) {
	w := newWidget(t, "w")
	c := cluster.Client()
	p := status.NewPatcher(w)
	w.Status.Phase = "Running"
	if sent, err := p.Patch(t.Context(), c, w, client.FieldOwner(owner), client.DryRunAll); err != nil || !sent {
		t.Fatalf("dry run = %t, %v; want sent", sent, err)
	}
	if got := read(t, w).Status.Phase; got != "" {
		t.Errorf("a dry run persisted phase %q", got)
	}
	if sent, err := p.Patch(t.Context(), c, w, client.FieldOwner(owner)); err != nil || !sent {
		t.Fatalf("Patch after a dry run = %t, %v; want a write", sent, err)
	}
	if got := read(t, w).Status.Phase; got != "Running" {
		t.Errorf("phase %q, want Running", got)
	}
}

// Another manager owns status.phase. Our apply of the whole status takes it
// over by default; with Force(false) the conflict is an Invalid error.
func TestPatchForce(t *testing.T) {
	w := newWidget(t, "w")
	c := cluster.Client()
	theirs := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"phase": "Theirs"}}}
	theirs.SetGroupVersionKind(widget.GroupVersion.WithKind("Widget"))
	theirs.SetNamespace(w.Namespace)
	theirs.SetName(w.Name)
	if err := c.Status().Apply(t.Context(), client.ApplyConfigurationFromUnstructured(theirs), client.FieldOwner("other-controller")); err != nil {
		t.Fatal(err)
	}

	obj := read(t, w)
	p := status.NewPatcher(obj)
	obj.Status.Phase = "Ours"
	_, err := p.Patch(t.Context(), c, obj, client.FieldOwner(owner), apply.Force(false))
	if koperrors.KindOf(err) != koperrors.Invalid || !strings.Contains(err.Error(), "other-controller") {
		t.Errorf("Patch without force = %v; want an Invalid error naming other-controller", err)
	}
	if got := read(t, w).Status.Phase; got != "Theirs" {
		t.Errorf("phase %q after a refused write, want Theirs", got)
	}
	if _, err := p.Patch(t.Context(), c, obj, client.FieldOwner(owner)); err != nil {
		t.Fatalf("forced Patch: %v", err)
	}
	if got := read(t, w).Status.Phase; got != "Ours" {
		t.Errorf("phase %q, want Ours", got)
	}
}

func TestPatchErrors(t *testing.T) {
	w := newWidget(t, "w")
	c, requests := countingClient(t, w)
	other := newWidget(t, "other")
	gone := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: "gone"}}
	tests := []struct {
		name         string
		patcherOf    *widget.Widget
		obj          *widget.Widget
		opts         []client.SubResourceApplyOption
		wantKind     koperrors.Kind
		wantRequests int64
	}{
		// The API server requires a field manager for an apply.
		{"no field owner", w, w, nil, koperrors.Invalid, 1},
		{"patcher of another object", other, w, []client.SubResourceApplyOption{client.FieldOwner(owner)}, koperrors.Invalid, 0},
		{"object does not exist", gone, gone, []client.SubResourceApplyOption{client.FieldOwner(owner)}, koperrors.NotFound, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := status.NewPatcher(tt.patcherOf.DeepCopyObject().(*widget.Widget))
			obj := tt.obj.DeepCopyObject().(*widget.Widget)
			obj.Status.Phase = "Running"
			requests.Store(0)
			sent, err := p.Patch(t.Context(), c, obj, tt.opts...)
			if sent || koperrors.KindOf(err) != tt.wantKind || err == nil {
				t.Errorf("Patch = %t, %v; want an error of kind %s", sent, err, tt.wantKind)
			}
			if err != nil && !strings.Contains(err.Error(), "Widget "+obj.Namespace+"/"+obj.Name) {
				t.Errorf("error %q does not name the object", err)
			}
			if n := requests.Load(); n != tt.wantRequests {
				t.Errorf("%d requests, want %d", n, tt.wantRequests)
			}
		})
	}
}

// The field owner comes from a client made with client.WithFieldOwner, and a
// per-call client.FieldOwner overrides it: the status entry in managedFields
// names the manager that wrote it.
func TestPatchFieldOwner(t *testing.T) {
	tests := []struct {
		name string
		opts []client.SubResourceApplyOption
		want string
	}{
		{"client's default", nil, "default-owner"},
		{"per call", []client.SubResourceApplyOption{client.FieldOwner("per-call-owner")}, "per-call-owner"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWidget(t, "w")
			c := client.WithFieldOwner(cluster.Client(), "default-owner")
			obj := read(t, w)
			p := status.NewPatcher(obj)
			obj.Status.Phase = "Running"
			if sent, err := p.Patch(t.Context(), c, obj, tt.opts...); err != nil || !sent {
				t.Fatalf("Patch = %t, %v; want a write", sent, err)
			}
			var managers []string
			for _, m := range read(t, w).ManagedFields {
				if m.Subresource == "status" && m.Operation == metav1.ManagedFieldsOperationApply {
					managers = append(managers, m.Manager)
				}
			}
			if diff := cmp.Diff([]string{tt.want}, managers); diff != "" {
				t.Errorf("status appliers (-want +got):\n%s", diff)
			}
		})
	}
}

// A cache two of our writes behind: the reconcile that wrote the second
// status read the version before the first (stale), and the next one reads
// the first write's version, which the write log knows predates the
// second. Computing the second status again sends nothing; computing
// another one sends it.
func TestPatchCacheTwoWritesBehind(t *testing.T) {
	w := newWidget(t, "w")
	c, requests := countingClient(t, w)
	set := func(w *widget.Widget, phase string) {
		status.Set(w, metav1.Condition{Type: status.Ready, Status: metav1.ConditionFalse, Reason: phase, LastTransitionTime: hourAgo})
		w.Status.Phase = phase
	}
	patch := func(obj *widget.Widget, phase string) bool {
		t.Helper()
		p := status.NewPatcher(obj)
		set(obj, phase)
		sent, err := p.Patch(t.Context(), c, obj, client.FieldOwner(owner))
		if err != nil {
			t.Fatal(err)
		}
		return sent
	}
	v0 := w.DeepCopyObject().(*widget.Widget)
	first := v0.DeepCopyObject().(*widget.Widget)
	if !patch(first, "Deploying") { // v0 -> v1
		t.Fatal("first write not sent")
	}
	v1 := read(t, w)
	if !patch(v0.DeepCopyObject().(*widget.Widget), "Running") { // a stale read of v0 -> v2
		t.Fatal("second write not sent")
	}

	requests.Store(0)
	if patch(v1.DeepCopyObject().(*widget.Widget), "Running") {
		t.Error("a read of our first write, with the second write's status: sent, want nothing (the server holds it)")
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests, want 0", n)
	}
	if !patch(v1.DeepCopyObject().(*widget.Widget), "Deploying") {
		t.Error("a read of our first write, computing its status again (not what the server holds): nothing sent")
	}
	if got := observe(read(t, w)); got.Phase != "Deploying" {
		t.Errorf("stored phase %q, want Deploying", got.Phase)
	}
}

// Unchanged after our own write: on the Patcher that wrote, and on a
// fresh read at the version the write returned (the reconcile our own
// status write triggers). Both take the shortcut; a read that lags behind
// the write (the cache has not shown it yet) still does not resend it.
// Before the fix both answered false: the Patcher that wrote had only a
// JSON snapshot, and any remembered write counted as pending.
func TestUnchangedAfterOwnWrite(t *testing.T) {
	w := newWidget(t, "w")
	c, requests := countingClient(t, w)
	stale := w.DeepCopyObject().(*widget.Widget)
	compute := func(w *widget.Widget) {
		status.Set(w, metav1.Condition{Type: status.Ready, Status: metav1.ConditionTrue, Reason: "Deployed", LastTransitionTime: hourAgo})
	}
	p := status.NewPatcher(w)
	compute(w)
	if sent, err := p.Patch(t.Context(), c, w, client.FieldOwner(owner)); err != nil || !sent {
		t.Fatalf("first Patch = %t, %v; want sent", sent, err)
	}
	if !p.Unchanged(w) {
		t.Error("the Patcher that wrote: Unchanged = false for the status it just sent")
	}

	// The cache behind: the version our write started from.
	requests.Store(0)
	ps := status.NewPatcher(stale)
	compute(stale)
	if sent, err := ps.Patch(t.Context(), c, stale, client.FieldOwner(owner)); err != nil || sent {
		t.Errorf("Patch of a read older than our write = %t, %v; want nothing sent", sent, err)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests for a read older than our write, want 0", n)
	}

	// The cache caught up.
	fresh := read(t, w)
	if fresh.ResourceVersion != w.ResourceVersion {
		t.Fatalf("read %s, want our write %s", fresh.ResourceVersion, w.ResourceVersion)
	}
	pf := status.NewPatcher(fresh)
	compute(fresh)
	if !pf.Unchanged(fresh) {
		t.Error("a read at our write's version: Unchanged = false")
	}
}
