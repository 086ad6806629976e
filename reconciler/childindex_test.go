package reconciler_test

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/internal/childindex"
)

// The controller index lists a parent's children across namespaces from
// a real cache, cluster-wide and restricted to namespaces, with one index
// value per object in the form controller-runtime's cache reader looks up.
// A change of that form in controller-runtime lists nothing here.
func TestIndexListsAcrossNamespaces(t *testing.T) {
	ns1, ns2 := cluster.Namespace(t), cluster.Namespace(t)
	const parentA, parentB = types.UID("6a1c3f0e-0000-4000-8000-00000000000a"), types.UID("6a1c3f0e-0000-4000-8000-00000000000b")
	owned := func(ns, name string, uid types.UID) *corev1.ConfigMap {
		yes := true
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "example.com/v1", Kind: "Parent", Name: "p", UID: uid, Controller: &yes,
		}}}}
	}
	for _, cm := range []*corev1.ConfigMap{owned(ns1, "a1", parentA), owned(ns2, "a2", parentA), owned(ns1, "b1", parentB), {ObjectMeta: metav1.ObjectMeta{Namespace: ns1, Name: "none"}}} {
		if err := cluster.Client().Create(t.Context(), cm); err != nil {
			t.Fatal(err)
		}
	}
	for name, opts := range map[string]cache.Options{
		"cluster-wide":         {},
		"restricted to two ns": {DefaultNamespaces: map[string]cache.Config{ns1: {}, ns2: {}}},
	} {
		t.Run(name, func(t *testing.T) {
			opts.Scheme, opts.Mapper = cluster.Scheme(), cluster.Client().RESTMapper()
			c, err := cache.New(cluster.Config, opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := childindex.Add(t.Context(), c, []client.Object{&corev1.ConfigMap{}}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); _ = c.Start(ctx) }()
			t.Cleanup(func() { cancel(); <-done })
			if !c.WaitForCacheSync(t.Context()) {
				t.Fatal("cache did not sync")
			}
			list := func(uid types.UID) []string {
				var l corev1.ConfigMapList
				if err := c.List(t.Context(), &l, client.MatchingFields{childindex.Field: string(uid)}); err != nil {
					t.Fatalf("list by controller %s: %v", uid, err)
				}
				var names []string
				for _, cm := range l.Items {
					names = append(names, cm.Namespace+"/"+cm.Name)
				}
				slices.Sort(names)
				return names
			}
			// The cache may lag behind the creates at first.
			var got []string
			_ = wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
				got = list(parentA)
				return len(got) == 2, nil
			})
			want := []string{ns1 + "/a1", ns2 + "/a2"}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("children of A: %v, want %v", got, want)
			}
			if got, want := list(parentB), []string{ns1 + "/b1"}; !slices.Equal(got, want) {
				t.Errorf("children of B: %v, want %v", got, want)
			}
			if got := list("no-such-uid"); len(got) != 0 {
				t.Errorf("children of an unknown UID: %v, want none", got)
			}
		})
	}
}
