package gc_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	kopmeta "github.com/kopgo/kopgo/meta"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/gc"
	"github.com/kopgo/kopgo/scope"
	"github.com/kopgo/kopgo/test/testkit"
)

var cluster *testkit.Cluster

// A bare control plane on purpose: without kube-controller-manager's garbage
// collector, what disappears here was deleted by this package.
func TestMain(m *testing.M) {
	testkit.Main(m, testkit.Options{}, func(c *testkit.Cluster) { cluster = c })
}

var (
	cmGVK    = corev1.SchemeGroupVersion.WithKind("ConfigMap")
	selector = labels.SelectorFromSet(labels.Set{"app.kubernetes.io/managed-by": "kopgo-test"})
	managed  = map[string]string{"app.kubernetes.io/managed-by": "kopgo-test"}
)

const (
	ours    = "kopgo.dev/ours"
	foreign = "other.io/theirs"
)

func create(t *testing.T, cm *corev1.ConfigMap) *corev1.ConfigMap {
	t.Helper()
	if err := cluster.Client().Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // release finalizers so the namespace can go
		_ = cluster.Client().Patch(context.Background(), cm, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
	})
	return cm
}

// spec is one generated object and what must become of it.
type spec struct {
	name       string
	labelled   bool
	owner      string // "live", "dead" or ""
	finalizers []string
	deleting   bool // deleted before collection
}

// Property: over random mixes of owned, orphaned, foreign, unlabelled and
// finalizer-carrying objects, Collect with OwnerExists deletes exactly the
// labelled orphans, removes only our finalizer, and reports stuck objects.
func TestCollectNeverHurtsOthers(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 42))
			ns := cluster.Namespace(t)
			c := cluster.Client()
			live := create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owner"}})
			finalizerSets := [][]string{nil, {ours}, {foreign}, {ours, foreign}}
			var specs []spec
			for i := range 24 {
				s := spec{
					name:       fmt.Sprintf("obj-%02d", i),
					labelled:   rng.IntN(4) > 0,
					owner:      []string{"live", "dead", ""}[rng.IntN(3)],
					finalizers: finalizerSets[rng.IntN(len(finalizerSets))],
				}
				s.deleting = len(s.finalizers) > 0 && rng.IntN(3) == 0
				specs = append(specs, s)
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: s.name, Finalizers: s.finalizers}}
				if s.labelled {
					cm.Labels = managed
				}
				switch s.owner {
				case "live":
					cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: live.Name, UID: live.UID}}
				case "dead":
					cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: live.Name, UID: types.UID(fmt.Sprintf("dead-%d", i))}}
				}
				create(t, cm)
				if s.deleting {
					if err := c.Delete(t.Context(), cm); err != nil {
						t.Fatal(err)
					}
				}
			}

			res, err := gc.Collect(t.Context(), c, cmGVK, scope.Namespaced(ns), selector, gc.OwnerExists(c), gc.OwnedFinalizers{ours})
			if err != nil {
				t.Fatal(err)
			}

			var wantDeleted, wantStuck []string
			for _, s := range specs {
				var got corev1.ConfigMap
				err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: s.name}, &got)
				gone := koperrors.KindOf(err) == koperrors.NotFound
				if err != nil && !gone {
					t.Fatal(err)
				}
				collected := s.labelled && (s.owner != "live" || s.deleting)
				hasForeign := slices.Contains(s.finalizers, foreign)
				if collected && !s.deleting {
					wantDeleted = append(wantDeleted, s.name)
				}
				if collected && hasForeign {
					wantStuck = append(wantStuck, s.name)
				}
				switch {
				case !collected:
					// Untouched: exists with every finalizer it had.
					if gone || !cmp.Equal(got.Finalizers, s.finalizers, cmpEmpty) || (got.DeletionTimestamp != nil) != s.deleting {
						t.Errorf("%+v: touched (gone=%t finalizers=%v deleting=%t)", s, gone, got.Finalizers, got.DeletionTimestamp != nil)
					}
				case hasForeign:
					// Being deleted, the foreign finalizer intact, ours gone.
					if gone || !slices.Equal(got.Finalizers, []string{foreign}) || got.DeletionTimestamp == nil {
						t.Errorf("%+v: want deleting with only %s left, got gone=%t finalizers=%v", s, foreign, gone, got.Finalizers)
					}
				default:
					if !gone {
						t.Errorf("%+v: want deleted, still there with finalizers %v", s, got.Finalizers)
					}
				}
			}
			if diff := cmp.Diff(wantDeleted, names(res.Deleted), cmpEmpty); diff != "" {
				t.Errorf("Result.Deleted (-want +got):\n%s", diff)
			}
			var stuck []string
			for _, s := range res.Stuck {
				stuck = append(stuck, s.Name)
				if !slices.Equal(s.Finalizers, []string{foreign}) {
					t.Errorf("stuck %s reports finalizers %v, want [%s]", s.Name, s.Finalizers, foreign)
				}
			}
			if diff := cmp.Diff(wantStuck, stuck, cmpEmpty); diff != "" {
				t.Errorf("Result.Stuck (-want +got):\n%s", diff)
			}
		})
	}
}

var cmpEmpty = cmp.Comparer(func(a, b []string) bool { return slices.Equal(a, b) })

func names(refs []kopmeta.ObjectRef) []string {
	var out []string
	for _, r := range refs {
		out = append(out, r.Name)
	}
	return out
}

// An object re-created under the same name between the list and the delete
// is not deleted: deletes carry the listed UID as a precondition.
func TestRecreatedObjectIsNotDeleted(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	old := create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm", Labels: managed}})
	var newUID types.UID
	recreate := func(ctx context.Context, _ *metav1.PartialObjectMetadata) (bool, error) {
		if err := c.Delete(ctx, old); err != nil {
			return false, err
		}
		fresh := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm", Labels: managed}}
		if err := c.Create(ctx, fresh); err != nil {
			return false, err
		}
		newUID = fresh.UID
		return false, nil // "delete it" — about the old object
	}
	res, err := gc.Collect(t.Context(), c, cmGVK, scope.Namespaced(ns), selector, recreate)
	if err != nil {
		t.Fatal(err)
	}
	var got corev1.ConfigMap
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "cm"}, &got); err != nil {
		t.Fatalf("the re-created object was deleted: %v", err)
	}
	if got.UID != newUID || len(res.Deleted) != 0 {
		t.Errorf("uid %s (want %s), Deleted %v (want none)", got.UID, newUID, res.Deleted)
	}
}

func TestOwnerRecreatedWithSameNameIsNotTheOwner(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	owner := create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owner"}})
	child := create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "child", Labels: managed,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: owner.UID}}}})
	if err := c.Delete(t.Context(), owner); err != nil {
		t.Fatal(err)
	}
	create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owner"}})
	res, err := gc.Collect(t.Context(), c, cmGVK, scope.Namespaced(ns), selector, gc.OwnerExists(c))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{child.Name}, names(res.Deleted)); diff != "" {
		t.Errorf("Deleted (-want +got):\n%s", diff)
	}
}

func TestPruneDeletesOnlyUnwantedChildrenOfTheParent(t *testing.T) {
	ns := cluster.Namespace(t)
	c := cluster.Client()
	parent := create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "parent"}})
	other := create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other-parent"}})
	controlledBy := func(p *corev1.ConfigMap) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: p.Name, UID: p.UID, Controller: new(true)}}
	}
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "wanted", Labels: managed, OwnerReferences: controlledBy(parent)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "unwanted", Labels: managed, OwnerReferences: controlledBy(parent)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "someone-elses", Labels: managed, OwnerReferences: controlledBy(other)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "unlabelled", OwnerReferences: controlledBy(parent)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "labelled-unowned", Labels: managed}},
	} {
		cm.Namespace = ns
		create(t, cm)
	}
	desired := []kopmeta.ObjectRef{{Kind: "ConfigMap", Namespace: ns, Name: "wanted"}}

	dry, err := gc.Prune(t.Context(), c, parent, selector, []schema.GroupVersionKind{cmGVK}, desired, client.DryRunAll)
	if err != nil {
		t.Fatal(err)
	}
	res, err := gc.Prune(t.Context(), c, parent, selector, []schema.GroupVersionKind{cmGVK}, desired)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"unwanted"}, names(res.Deleted)); diff != "" {
		t.Errorf("Deleted (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(names(res.Deleted), names(dry.Deleted)); diff != "" {
		t.Errorf("dry run reported differently (-real +dry):\n%s", diff)
	}
	var left corev1.ConfigMapList
	if err := c.List(t.Context(), &left, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, cm := range left.Items {
		if !strings.HasPrefix(cm.Name, "kube-") {
			got = append(got, cm.Name)
		}
	}
	want := []string{"labelled-unowned", "other-parent", "parent", "someone-elses", "unlabelled", "wanted"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects left (-want +got):\n%s", diff)
	}
}

func TestRefusals(t *testing.T) {
	c := cluster.Client()
	keepAll := func(context.Context, *metav1.PartialObjectMetadata) (bool, error) { return true, nil }
	tests := []struct {
		name string
		s    scope.Scope
		sel  labels.Selector
		want string
	}{
		{"empty selector", scope.Namespaced("x"), labels.Everything(), "refusing to collect every ConfigMap"},
		{"nil selector", scope.Namespaced("x"), nil, "refusing to collect every ConfigMap"},
		{"wrong scope", scope.Cluster, selector, "scope Cluster given for namespaced kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := gc.Collect(t.Context(), c, cmGVK, tt.s, tt.sel, keepAll)
			if koperrors.KindOf(err) != koperrors.Invalid || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Collect() = %v, want Invalid containing %q", err, tt.want)
			}
		})
	}
}
