package finalizers_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/finalizers"
	"github.com/kopgo/kopgo/test/testkit"
)

var cluster *testkit.Cluster

func TestMain(m *testing.M) {
	testkit.Main(m, testkit.Options{}, func(c *testkit.Cluster) { cluster = c })
}

const ours = "kopgo.dev/cleanup"

// countingClient is an uncached client whose HTTP requests are counted.
func countingClient(t *testing.T) (client.Client, *atomic.Int64) {
	t.Helper()
	cfg, traffic := cluster.CountedConfig()
	c, err := client.New(cfg, client.Options{Scheme: cluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	// The first use discovers the API; count only what comes after.
	_ = c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "warm-up"}, &corev1.ConfigMap{})
	traffic.Reset()
	return c, &traffic.Requests
}

// newConfigMap creates a ConfigMap with fins, in ns or else in a fresh
// namespace. Whatever finalizers are left when the test ends are dropped so
// that the namespace can go.
func newConfigMap(t *testing.T, ns string, fins ...string) *corev1.ConfigMap {
	t.Helper()
	if ns == "" {
		ns = cluster.Namespace(t)
	}
	// Some data, so that the object has managed fields from the start (the
	// API server only starts tracking them on an object that has some).
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm", Finalizers: fins}, Data: map[string]string{"k": "v"}}
	if err := cluster.Client().Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dropFinalizers(cm) })
	return cm
}

func dropFinalizers(cm *corev1.ConfigMap) {
	_ = cluster.Client().Patch(context.Background(), cm.DeepCopy(),
		client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
}

func serverFinalizers(t *testing.T, cm *corev1.ConfigMap) []string {
	t.Helper()
	var got corev1.ConfigMap
	if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(cm), &got); err != nil {
		t.Fatal(err)
	}
	return got.Finalizers
}

// setServerFinalizers is another controller's write: a read-modify-write
// Update of the finalizers, leaving the test's copy of the object stale.
func setServerFinalizers(t *testing.T, cm *corev1.ConfigMap, fins ...string) {
	t.Helper()
	var cur corev1.ConfigMap
	if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(cm), &cur); err != nil {
		t.Fatal(err)
	}
	cur.Finalizers = fins
	if err := cluster.Client().Update(t.Context(), &cur); err != nil {
		t.Fatal(err)
	}
}

// serverBecomes is a meanwhile step: setServerFinalizers to fins.
func serverBecomes(fins ...string) func(*testing.T, *corev1.ConfigMap) {
	return func(t *testing.T, cm *corev1.ConfigMap) {
		t.Helper()
		setServerFinalizers(t, cm, fins...)
	}
}

func setServerLabel(t *testing.T, cm *corev1.ConfigMap) {
	t.Helper()
	patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"touched":"yes"}}}`))
	if err := cluster.Client().Patch(t.Context(), cm.DeepCopy(), patch); err != nil {
		t.Fatal(err)
	}
}

// The request counts of the package documentation, measured: nothing to
// do costs nothing, a change one patch, a lost race a patch, a read and a
// patch; a stale object whose finalizers did not move in a way that
// matters costs one patch.
func TestRequestCounts(t *testing.T) {
	const theirs, late, early = "other.io/theirs", "other.io/late", "other.io/early"
	add := func(ctx context.Context, c client.Client, cm *corev1.ConfigMap) (bool, error) {
		return finalizers.Add(ctx, c, cm, ours)
	}
	remove := func(ctx context.Context, c client.Client, cm *corev1.ConfigMap) (bool, error) {
		return finalizers.Remove(ctx, c, cm, ours)
	}
	tests := []struct {
		name         string
		start        []string // the finalizers created with, and in hand
		meanwhile    func(t *testing.T, cm *corev1.ConfigMap)
		do           func(context.Context, client.Client, *corev1.ConfigMap) (bool, error)
		wantChanged  bool
		wantRequests int64
		wantServer   []string
	}{
		{name: "add when present", start: []string{theirs, ours}, do: add,
			wantChanged: false, wantRequests: 0, wantServer: []string{theirs, ours}},
		{name: "add when absent", start: []string{theirs}, do: add,
			wantChanged: true, wantRequests: 1, wantServer: []string{theirs, ours}},
		{name: "add when absent, no finalizers at all", do: add,
			wantChanged: true, wantRequests: 1, wantServer: []string{ours}},
		{name: "add, stale: another label changed", start: []string{theirs},
			meanwhile: setServerLabel, do: add,
			wantChanged: true, wantRequests: 1, wantServer: []string{theirs, ours}},
		{name: "add, stale: another finalizer added", start: []string{theirs},
			meanwhile: serverBecomes(theirs, late), do: add,
			wantChanged: true, wantRequests: 3, wantServer: []string{theirs, late, ours}},
		{name: "add, stale: ours added by someone else", start: []string{theirs},
			meanwhile: serverBecomes(theirs, ours), do: add,
			wantChanged: false, wantRequests: 2, wantServer: []string{theirs, ours}},
		{name: "remove when absent", start: []string{theirs}, do: remove,
			wantChanged: false, wantRequests: 0, wantServer: []string{theirs}},
		{name: "remove when present", start: []string{theirs, ours}, do: remove,
			wantChanged: true, wantRequests: 1, wantServer: []string{theirs}},
		{name: "remove, stale: another finalizer appended", start: []string{theirs, ours},
			meanwhile: serverBecomes(theirs, ours, late), do: remove,
			wantChanged: true, wantRequests: 1, wantServer: []string{theirs, late}},
		{name: "remove, stale: an earlier finalizer removed", start: []string{theirs, ours},
			meanwhile: serverBecomes(ours), do: remove,
			wantChanged: true, wantRequests: 3, wantServer: nil},
		{name: "remove, stale: an earlier finalizer inserted", start: []string{theirs, ours},
			meanwhile: serverBecomes(early, theirs, ours), do: remove,
			wantChanged: true, wantRequests: 3, wantServer: []string{early, theirs}},
		{name: "remove, stale: ours removed by someone else", start: []string{theirs, ours},
			meanwhile: serverBecomes(theirs), do: remove,
			wantChanged: false, wantRequests: 2, wantServer: []string{theirs}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, requests := countingClient(t)
			cm := newConfigMap(t, "", tt.start...)
			if tt.meanwhile != nil {
				tt.meanwhile(t, cm)
			}
			changed, err := tt.do(t.Context(), c, cm)
			if err != nil {
				t.Fatal(err)
			}
			if changed != tt.wantChanged {
				t.Errorf("changed = %t, want %t", changed, tt.wantChanged)
			}
			if got := requests.Load(); got != tt.wantRequests {
				t.Errorf("%d requests, want %d", got, tt.wantRequests)
			}
			server := serverFinalizers(t, cm)
			if diff := cmp.Diff(tt.wantServer, server); diff != "" {
				t.Errorf("server finalizers (-want +got):\n%s", diff)
			}
			if tt.wantRequests > 0 {
				if diff := cmp.Diff(server, cm.Finalizers); diff != "" {
					t.Errorf("the object in hand differs from the server (-server +in hand):\n%s", diff)
				}
			}
		})
	}
}

// A manager's client reads from its cache; lost races are settled all the
// same, with fresh reads, at the same cost.
func TestCachedClient(t *testing.T) {
	ns := cluster.Namespace(t)
	c, requests := cachedClient(t, ns)
	cm := newConfigMap(t, ns, "other.io/theirs")
	setServerFinalizers(t, cm, "other.io/theirs", "other.io/late")
	before := requests()
	changed, err := finalizers.Add(t.Context(), c, cm, ours)
	if err != nil || !changed {
		t.Fatalf("Add = %t, %v", changed, err)
	}
	if got := requests() - before; got != 3 {
		t.Errorf("%d requests, want 3 (refused patch, probe, patch)", got)
	}
	if diff := cmp.Diff([]string{"other.io/theirs", "other.io/late", ours}, serverFinalizers(t, cm)); diff != "" {
		t.Errorf("server finalizers (-want +got):\n%s", diff)
	}
}

// The field owner names the manager the server records for our entry: a
// per-call client.FieldOwner, else the default of a client made with
// client.WithFieldOwner.
func TestFieldOwner(t *testing.T) {
	tests := []struct {
		name string
		c    client.Client
		opts []client.PatchOption
		want string
	}{
		{"per call", cluster.Client(), []client.PatchOption{client.FieldOwner("cleanup-controller")}, "cleanup-controller"},
		{"client's default", client.WithFieldOwner(cluster.Client(), "default-controller"), nil, "default-controller"},
		{"per call over the client's default", client.WithFieldOwner(cluster.Client(), "default-controller"), []client.PatchOption{client.FieldOwner("cleanup-controller")}, "cleanup-controller"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cm := newConfigMap(t, "")
			if _, err := finalizers.Add(t.Context(), tt.c, cm, ours, tt.opts...); err != nil {
				t.Fatal(err)
			}
			owner := ""
			for _, m := range cm.ManagedFields {
				if m.FieldsV1 != nil && strings.Contains(m.FieldsV1.GetRawString(), `"v:\"`+ours+`\""`) {
					owner = m.Manager
				}
			}
			if owner != tt.want {
				t.Errorf("finalizer %s is managed by %q, want %s; managed fields: %+v", ours, owner, tt.want, cm.ManagedFields)
			}
		})
	}
}

func TestRemoveOnGoneAndDeletingObjects(t *testing.T) {
	c := cluster.Client()
	cm := newConfigMap(t, "", ours)
	if err := c.Delete(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(cm), cm); err != nil {
		t.Fatal(err)
	}
	if cm.DeletionTimestamp == nil {
		t.Fatal("object with a finalizer was not marked for deletion")
	}
	// Ours is the last finalizer: removing it lets the object go.
	if changed, err := finalizers.Remove(t.Context(), c, cm, ours); err != nil || !changed {
		t.Fatalf("Remove on a deleting object = %t, %v, want true, nil", changed, err)
	}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}); koperrors.KindOf(err) != koperrors.NotFound {
		t.Fatalf("object still there after its last finalizer went: %v", err)
	}
	// The object is gone; a stale copy still lists ours: Remove succeeds.
	cm.Finalizers = []string{ours}
	if changed, err := finalizers.Remove(t.Context(), c, cm, ours); err != nil || changed {
		t.Errorf("Remove on a gone object = %t, %v, want false, nil", changed, err)
	}
	// Add on a gone object is an error the caller can branch on.
	skeleton := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, Name: cm.Name}}
	if _, err := finalizers.Add(t.Context(), c, skeleton, ours); koperrors.KindOf(err) != koperrors.NotFound {
		t.Errorf("Add on a gone object: %v, want NotFound", err)
	}
}

// An object deleted and created again under the same name is not the one
// in hand: Remove leaves the new one's finalizer alone (its cleanup has
// not run), Add does not touch it either.
func TestRecreatedObjectIsLeftAlone(t *testing.T) {
	c := cluster.Client()
	recreate := func(t *testing.T, old *corev1.ConfigMap, fins ...string) *corev1.ConfigMap {
		t.Helper()
		dropFinalizers(old)
		if err := c.Delete(t.Context(), old.DeepCopy()); err != nil && koperrors.KindOf(err) != koperrors.NotFound {
			t.Fatal(err)
		}
		return newConfigMap(t, old.Namespace, fins...)
	}
	t.Run("remove", func(t *testing.T) {
		old := newConfigMap(t, "", ours)
		fresh := recreate(t, old, ours)
		changed, err := finalizers.Remove(t.Context(), c, old, ours)
		if err != nil || changed {
			t.Fatalf("Remove on a replaced object = %t, %v, want false, nil", changed, err)
		}
		if diff := cmp.Diff([]string{ours}, serverFinalizers(t, fresh)); diff != "" {
			t.Errorf("the new object's finalizers (-want +got):\n%s", diff)
		}
		if old.UID == fresh.UID || !finalizers.Has(old, ours) {
			t.Errorf("the object in hand was overwritten with the new one: uid %s", old.UID)
		}
	})
	t.Run("add", func(t *testing.T) {
		old := newConfigMap(t, "")
		fresh := recreate(t, old)
		_, err := finalizers.Add(t.Context(), c, old, ours)
		if koperrors.KindOf(err) != koperrors.NotFound {
			t.Fatalf("Add on a replaced object: %v, want NotFound", err)
		}
		if got := serverFinalizers(t, fresh); len(got) != 0 {
			t.Errorf("the new object got finalizers %v", got)
		}
	})
}

func TestAddToDeletingObject(t *testing.T) {
	c, requests := countingClient(t)
	cm := newConfigMap(t, "", "other.io/holds")
	stale := cm.DeepCopy()
	if err := cluster.Client().Delete(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(cm), cm); err != nil {
		t.Fatal(err)
	}
	requests.Store(0)
	// The object in hand says it is being deleted: refused, no request.
	if _, err := finalizers.Add(t.Context(), c, cm, ours); koperrors.KindOf(err) != koperrors.Invalid {
		t.Errorf("Add to a deleting object in hand: %v, want Invalid", err)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests, want 0", n)
	}
	// Only the server knows: the patch is refused, the re-read tells why.
	if _, err := finalizers.Add(t.Context(), c, stale, ours); koperrors.KindOf(err) != koperrors.Conflict {
		t.Errorf("Add to a deleting object with a stale copy: %v, want Conflict", err)
	}
	if diff := cmp.Diff([]string{"other.io/holds"}, serverFinalizers(t, cm)); diff != "" {
		t.Errorf("server finalizers (-want +got):\n%s", diff)
	}
}

func TestInvalidNamesSendNothing(t *testing.T) {
	c, requests := countingClient(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "x", Name: "cm"}}
	tests := []struct {
		name            string
		addOK, removeOK bool
	}{
		{name: "cleanup", addOK: false, removeOK: true}, // legacy bare word: may be retired
		{name: ""},
		{name: "Example.com/a b"},
		{name: "example.com/"},
		{name: "/cleanup"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, addErr := finalizers.Add(t.Context(), c, cm, tt.name)
			_, removeErr := finalizers.Remove(t.Context(), c, cm, tt.name)
			if got := addErr == nil; got != tt.addOK || (!got && koperrors.KindOf(addErr) != koperrors.Invalid) {
				t.Errorf("Add: %v, want ok=%t or Invalid", addErr, tt.addOK)
			}
			if got := removeErr == nil; got != tt.removeOK || (!got && koperrors.KindOf(removeErr) != koperrors.Invalid) {
				t.Errorf("Remove: %v, want ok=%t or Invalid", removeErr, tt.removeOK)
			}
		})
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests sent, want 0", n)
	}
}

func TestErrorNamesObjectAndValue(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	_, err := finalizers.Add(t.Context(), cluster.Client(), cm, "cleanup")
	want := `add finalizer ConfigMap shop/web: finalizer "cleanup": must be domain-qualified, e.g. example.com/cleanup`
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant  %s", err, want)
	}
}

func TestRemoveAllRemovesDuplicatesToo(t *testing.T) {
	cm := newConfigMap(t, "", "a.io/x", ours, "b.io/y", ours, "a.io/x")
	changed, err := finalizers.RemoveAll(t.Context(), cluster.Client(), cm, ours, "a.io/x")
	if err != nil || !changed {
		t.Fatalf("RemoveAll = %t, %v", changed, err)
	}
	if diff := cmp.Diff([]string{"b.io/y"}, serverFinalizers(t, cm)); diff != "" {
		t.Errorf("server finalizers (-want +got):\n%s", diff)
	}
}
