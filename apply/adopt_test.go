package apply_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/apply"
	koperrors "github.com/kopgo/kopgo/errors"
)

// newParent creates a ConfigMap to serve as a parent, and returns a
// controller reference to it.
func newParent(t *testing.T, ns, name string) metav1.OwnerReference {
	t.Helper()
	p := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := cluster.Client().Create(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	return metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: name, UID: p.UID, Controller: new(true), BlockOwnerDeletion: new(true)}
}

// childAC is a ConfigMap apply configuration controlled by parent.
func childAC(ns, name string, parent metav1.OwnerReference, data map[string]string) *corev1ac.ConfigMapApplyConfiguration {
	return configMapAC(ns, name, data).WithOwnerReferences(metav1ac.OwnerReference().
		WithAPIVersion(parent.APIVersion).WithKind(parent.Kind).WithName(parent.Name).WithUID(parent.UID).
		WithController(true).WithBlockOwnerDeletion(true))
}

// childTyped is the same child as a typed object.
func childTyped(ns, name string, parent metav1.OwnerReference, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: []metav1.OwnerReference{parent}},
		Data:       data,
	}
}

// readConfigMap reads a ConfigMap from the API server.
func readConfigMap(t *testing.T, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := cluster.Client().Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
		t.Fatal(err)
	}
	return cm
}

// An object someone else created first, whose values already equal the
// desired ones, is not taken over by an apply with a controller reference:
// the Applier refuses with a TakeoverError naming the object and the way to
// adopt it, writes nothing, and adopts it only with AdoptOrphans(true). An
// object another controller controls is never taken over. The same with a
// cache and without one, for an apply configuration and a typed object.
func TestApplierDoesNotTakeOver(t *testing.T) {
	ns := cluster.Namespace(t)
	informers := startCache(t)
	ours := newParent(t, ns, "parent")
	theirs := newParent(t, ns, "their-parent")
	forms := []struct {
		name  string
		build func(name string) any
	}{
		{"apply configuration", func(n string) any { return childAC(ns, n, ours, map[string]string{"k": "v"}) }},
		{"typed", func(n string) any { return childTyped(ns, n, ours, map[string]string{"k": "v"}) }},
	}
	for _, form := range forms {
		for _, cached := range []bool{true, false} {
			variant := "without cache"
			var opts []apply.ApplierOption
			if cached {
				variant, opts = "with cache", []apply.ApplierOption{apply.WithCache(informers)}
			}
			t.Run(form.name+"/"+variant, func(t *testing.T) {
				a, requests := newApplier(t, opts...)
				prefix := strings.ReplaceAll(form.name+"-"+variant, " ", "-")

				// An orphan with the desired values.
				orphan := prefix + "-orphan"
				pre := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: orphan}, Data: map[string]string{"k": "v"}}
				if err := cluster.Client().Create(t.Context(), pre, client.FieldOwner("someone-else")); err != nil {
					t.Fatal(err)
				}
				if cached {
					waitCached(t, informers, cmKey(ns, orphan), pre.ResourceVersion)
				}
				_, err := a.Apply(t.Context(), form.build(orphan))
				te, ok := errors.AsType[*apply.TakeoverError](err)
				if !ok || koperrors.KindOf(err) != koperrors.Invalid || te.Controller != nil || te.Owner.UID != ours.UID {
					t.Fatalf("apply onto an orphan = %v, want a TakeoverError of Kind Invalid", err)
				}
				for _, want := range []string{"apply ConfigMap " + ns + "/" + orphan, "no controller", "apply.AdoptOrphans(true)"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not say %q", err, want)
					}
				}
				if got := readConfigMap(t, ns, orphan); got.ResourceVersion != pre.ResourceVersion || len(got.OwnerReferences) != 0 {
					t.Errorf("the orphan was written: resourceVersion %s (was %s), owners %v", got.ResourceVersion, pre.ResourceVersion, got.OwnerReferences)
				}

				// Adopted on purpose.
				res, err := a.Apply(t.Context(), form.build(orphan), apply.AdoptOrphans(true))
				if err != nil || res.Outcome != apply.Updated {
					t.Fatalf("apply with AdoptOrphans(true) = %s, %v; want Updated", res.Outcome, err)
				}
				if got := metav1.GetControllerOf(readConfigMap(t, ns, orphan)); got == nil || got.UID != ours.UID {
					t.Errorf("adopted orphan's controller = %v, want the parent", got)
				}
				// Now ours: applied again without the option, as after a restart.
				if cached {
					waitCached(t, informers, cmKey(ns, orphan), res.Object().GetResourceVersion())
				}
				b, _ := newApplier(t, opts...)
				if _, err := b.Apply(t.Context(), form.build(orphan)); err != nil {
					t.Errorf("apply of the adopted object by a new Applier: %v", err)
				}

				// Controlled by another parent: never, even with AdoptOrphans.
				other := prefix + "-controlled"
				taken := childTyped(ns, other, theirs, map[string]string{"k": "v"})
				if err := cluster.Client().Create(t.Context(), taken, client.FieldOwner("someone-else")); err != nil {
					t.Fatal(err)
				}
				if cached {
					waitCached(t, informers, cmKey(ns, other), taken.ResourceVersion)
				}
				for _, adopt := range []bool{false, true} {
					_, err := a.Apply(t.Context(), form.build(other), apply.AdoptOrphans(adopt))
					if te, ok := errors.AsType[*apply.TakeoverError](err); !adopt && (!ok || te.Controller == nil || te.Controller.UID != theirs.UID) {
						t.Errorf("apply onto another's child = %v, want a TakeoverError naming its controller", err)
					}
					if err == nil || koperrors.KindOf(err) != koperrors.Invalid {
						t.Errorf("apply onto another's child (AdoptOrphans %t) = %v, want an error of Kind Invalid", adopt, err)
					}
				}
				if got := readConfigMap(t, ns, other); got.ResourceVersion != taken.ResourceVersion {
					t.Errorf("another's child was written: %v", got.OwnerReferences)
				}

				// A child of our own: created, then applied again.
				mine := prefix + "-mine"
				for i, want := range []apply.Outcome{apply.Created, apply.Unchanged} {
					res, err := a.Apply(t.Context(), form.build(mine))
					if err != nil || res.Outcome != want {
						t.Errorf("apply %d of our own child = %s, %v; want %s", i+1, res.Outcome, err, want)
					}
					if cached && err == nil {
						waitCached(t, informers, cmKey(ns, mine), res.Object().GetResourceVersion())
					}
				}
				before := requests.all.Load()
				if _, err := a.Apply(t.Context(), form.build(mine)); err != nil {
					t.Error(err)
				}
				if want := map[bool]int64{true: 0, false: 1}[cached]; requests.all.Load()-before != want {
					t.Errorf("apply of our own converged child sent %d requests, want %d", requests.all.Load()-before, want)
				}
			})
		}
	}
}

// Without a cache, the first apply of an object with a controller reference
// reads it (one GET, counted in Requests) to learn its controller; later
// applies rely on the Applier's record and send the apply alone.
func TestApplierWithoutCacheReadsOnce(t *testing.T) {
	ns := cluster.Namespace(t)
	parent := newParent(t, ns, "parent")
	a, requests := newApplier(t)
	want := []struct {
		outcome  apply.Outcome
		requests int64
	}{{apply.Created, 2}, {apply.Unchanged, 1}, {apply.Unchanged, 1}}
	for i, w := range want {
		before := requests.all.Load()
		res, err := a.Apply(t.Context(), childAC(ns, "child", parent, map[string]string{"k": "v"}))
		got := requests.all.Load() - before
		if err != nil || res.Outcome != w.outcome || got != w.requests || int64(res.Requests) != got {
			t.Errorf("apply %d = %s with %d requests (reported %d), %v; want %s with %d", i+1, res.Outcome, got, res.Requests, err, w.outcome, w.requests)
		}
	}
}

// hidingReader is a cache that does not hold one object yet.
type hidingReader struct {
	client.Reader
	name string
}

func (h hidingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if key.Name == h.name {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, key.Name)
	}
	return h.Reader.Get(ctx, key, obj, opts...)
}

// An object created by someone else after the cache last looked (server-side
// apply has no create-only precondition) is taken over by the apply, which
// the API server's 200 (not 201) tells; the Applier removes its controller
// reference again at once and reports the takeover. The object keeps its
// data, and the next apply refuses without writing.
func TestApplierUndoesTakeoverOfObjectCreatedMeanwhile(t *testing.T) {
	ns := cluster.Namespace(t)
	parent := newParent(t, ns, "parent")
	informers := startCache(t)
	a, _ := newApplier(t, apply.WithCache(hidingReader{Reader: informers, name: "contested"}))
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "contested"}, Data: map[string]string{"theirs": "1"}}
	if err := cluster.Client().Create(t.Context(), theirs, client.FieldOwner("someone")); err != nil {
		t.Fatal(err)
	}
	_, err := a.Apply(t.Context(), childAC(ns, "contested", parent, map[string]string{"mine": "1"}))
	te, ok := errors.AsType[*apply.TakeoverError](err)
	if !ok || !te.Appeared || te.Manager != "someone" || koperrors.KindOf(err) != koperrors.Invalid {
		t.Fatalf("apply = %v, want a TakeoverError of Kind Invalid saying that %q created the object meanwhile", err, "someone")
	}
	for _, want := range []string{"apply ConfigMap " + ns + "/contested", `created by "someone"`, "removed again"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	got := readConfigMap(t, ns, "contested")
	if len(got.OwnerReferences) != 0 || got.Data["theirs"] != "1" {
		t.Errorf("after the undo: owners %v, data %v; want no owner and their data", got.OwnerReferences, got.Data)
	}
	// The cache sees it now: refused without a write.
	b, _ := newApplier(t, apply.WithCache(informers))
	waitCached(t, informers, cmKey(ns, "contested"), got.ResourceVersion)
	if _, err := b.Apply(t.Context(), childAC(ns, "contested", parent, map[string]string{"mine": "1"})); !isTakeover(err) {
		t.Errorf("next apply = %v, want a TakeoverError", err)
	}
	if again := readConfigMap(t, ns, "contested"); again.ResourceVersion != got.ResourceVersion {
		t.Errorf("the refused apply wrote the object")
	}
}

func isTakeover(err error) bool {
	_, ok := errors.AsType[*apply.TakeoverError](err)
	return ok
}

// A refused takeover also names the fields another manager owns with other
// values (from a dry run of the apply), so that one error says all that
// stands in the way; nothing is written.
func TestTakeoverErrorNamesConflicts(t *testing.T) {
	ns := cluster.Namespace(t)
	parent := newParent(t, ns, "parent")
	informers := startCache(t)
	a, requests := newApplier(t, apply.WithCache(informers))
	pre := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}, Data: map[string]string{"k": "theirs"}}
	if err := cluster.Client().Create(t.Context(), pre, client.FieldOwner("someone-else")); err != nil {
		t.Fatal(err)
	}
	waitCached(t, informers, cmKey(ns, "cm"), pre.ResourceVersion)
	res, err := a.Apply(t.Context(), childAC(ns, "cm", parent, map[string]string{"k": "ours"}))
	if !isTakeover(err) || len(apply.Conflicts(err)) != 1 || apply.Conflicts(err)[0].Field != ".data.k" {
		t.Fatalf("apply = %v, want a TakeoverError holding the conflict on .data.k", err)
	}
	if !strings.Contains(err.Error(), `.data.k (owned by "someone-else")`) || res.Requests != 1 || requests.patches.Load() != 1 {
		t.Errorf("error %q with %d requests (%d patches), want the conflict named after one dry run", err, res.Requests, requests.patches.Load())
	}
	if got := readConfigMap(t, ns, "cm"); got.ResourceVersion != pre.ResourceVersion {
		t.Errorf("the refused apply wrote the object")
	}
}

// A controller reference without a UID is bad input, refused locally.
func TestControllerReferenceWithoutUID(t *testing.T) {
	ns := cluster.Namespace(t)
	a, requests := newApplier(t)
	bad := configMapAC(ns, "cm", nil).WithOwnerReferences(metav1ac.OwnerReference().
		WithAPIVersion("v1").WithKind("ConfigMap").WithName("parent").WithController(true))
	_, err := a.Apply(t.Context(), bad)
	if koperrors.KindOf(err) != koperrors.Invalid || !strings.Contains(err.Error(), "metadata.ownerReferences[0].uid") || requests.all.Load() != 0 {
		t.Errorf("apply = %v with %d requests, want Invalid naming metadata.ownerReferences[0].uid, and none", err, requests.all.Load())
	}
}

// Right after our own create, a cache that has not received the object yet
// says it is not there. The next apply of the same child is Unchanged, as
// it is (the server returns the version our create left), and is not taken
// for someone else's object: the Applier remembers what it created.
func TestCacheLagAfterOwnCreate(t *testing.T) {
	ns := cluster.Namespace(t)
	parent := newParent(t, ns, "parent")
	informers := startCache(t)
	a, _ := newApplier(t, apply.WithCache(hidingReader{Reader: informers, name: "child"}))
	for i, want := range []apply.Outcome{apply.Created, apply.Unchanged, apply.Unchanged} {
		res, err := a.Apply(t.Context(), childAC(ns, "child", parent, map[string]string{"k": "v"}))
		if err != nil || res.Outcome != want {
			t.Errorf("apply %d = %s, %v; want %s", i+1, res.Outcome, err, want)
		}
	}
	if got := metav1.GetControllerOf(readConfigMap(t, ns, "child")); got == nil || got.UID != parent.UID {
		t.Errorf("child's controller = %v, want the parent", got)
	}
}

// A child of an earlier parent of the same name (deleted and created
// again; the garbage collector has not removed the child yet) is not taken
// over by the new parent either, and the error says to wait.
func TestEarlierParentsChildIsNotTakenOver(t *testing.T) {
	ns := cluster.Namespace(t)
	a, _ := newApplier(t)
	earlier := newParent(t, ns, "parent")
	if _, err := a.Apply(t.Context(), childAC(ns, "child", earlier, nil)); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Client().Delete(t.Context(), cmKey(ns, "parent")); err != nil {
		t.Fatal(err)
	}
	later := newParent(t, ns, "parent")
	_, err := a.Apply(t.Context(), childAC(ns, "child", later, nil))
	if te, ok := errors.AsType[*apply.TakeoverError](err); !ok || te.Controller.UID != earlier.UID || !strings.Contains(err.Error(), "an earlier ConfigMap parent") {
		t.Errorf("apply for the new parent = %v, want a TakeoverError naming the earlier parent", err)
	}
	if got := metav1.GetControllerOf(readConfigMap(t, ns, "child")); got == nil || got.UID != earlier.UID {
		t.Errorf("child's controller = %v, want the earlier parent still", got)
	}
}

// failingPatches fails the PATCH requests whose numbers (from 1) it holds.
type failingPatches struct {
	next    http.RoundTripper
	patches atomic.Int64
	fail    map[int64]bool
}

func (f *failingPatches) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPatch && f.fail[f.patches.Add(1)] {
		return nil, errors.New("connection reset (injected)")
	}
	return f.next.RoundTrip(r)
}

// When removing the controller reference again fails, the object stays
// taken over by accident only until the next apply of it, which removes
// the reference first and reports the takeover again.
func TestFailedUndoIsRetried(t *testing.T) {
	ns := cluster.Namespace(t)
	parent := newParent(t, ns, "parent")
	informers := startCache(t)
	cfg := rest.CopyConfig(cluster.Config)
	fault := &failingPatches{fail: map[int64]bool{2: true}} // the first undo
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { fault.next = rt; return fault }
	a, err := apply.New(cfg, owner, apply.WithCache(hidingReader{Reader: informers, name: "contested"}))
	if err != nil {
		t.Fatal(err)
	}
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "contested"}, Data: map[string]string{"theirs": "1"}}
	if err := cluster.Client().Create(t.Context(), theirs, client.FieldOwner("someone")); err != nil {
		t.Fatal(err)
	}
	intent := childAC(ns, "contested", parent, map[string]string{"mine": "1"})
	if _, err := a.Apply(t.Context(), intent); !isTakeover(err) || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("apply with a failing undo = %v, want a TakeoverError saying the undo failed", err)
	}
	if got := metav1.GetControllerOf(readConfigMap(t, ns, "contested")); got == nil {
		t.Fatal("the fault did not leave the object taken over; the test proves nothing")
	}
	_, err = a.Apply(t.Context(), intent)
	if te, ok := errors.AsType[*apply.TakeoverError](err); !ok || !te.Appeared {
		t.Errorf("next apply = %v, want the takeover reported again", err)
	}
	if got := readConfigMap(t, ns, "contested"); len(got.OwnerReferences) != 0 || got.Data["theirs"] != "1" {
		t.Errorf("after the retried undo: owners %v, data %v; want no owner and their data", got.OwnerReferences, got.Data)
	}
}
