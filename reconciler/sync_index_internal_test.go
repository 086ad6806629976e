package reconciler

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kopgo/kopgo/apply"
	"github.com/kopgo/kopgo/internal/childindex"
)

// With the controller index, Sync finds a parent's children by the index
// (no scan of the namespace by label); without it, by label. Either way it
// finds exactly the children that are labelled and controlled by the
// parent. Pure logic: the fake client stands for the cache.
func TestListChildrenUsesTheControllerIndex(t *testing.T) {
	parent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid-p"}}
	controlled := func(name, uid string, labelled bool) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "p", UID: types.UID("uid-" + uid), Controller: new(true)}}}}
		if labelled {
			s.Labels = map[string]string{"owner": "p"}
		}
		return s
	}
	objs := []client.Object{controlled("mine", "p", true), controlled("unlabelled", "p", false), controlled("other", "q", true)}
	mapper := apimeta.NewDefaultRESTMapper(nil)
	for _, kind := range []string{"Secret", "ConfigMap"} {
		mapper.Add(corev1.SchemeGroupVersion.WithKind(kind), apimeta.RESTScopeNamespace)
	}
	for _, indexed := range []bool{true, false} {
		var fieldLists, labelLists int
		b := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithRESTMapper(mapper).WithObjects(objs...).
			WithInterceptorFuncs(interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				o := (&client.ListOptions{}).ApplyOptions(opts)
				if o.FieldSelector != nil {
					fieldLists++
				}
				if o.LabelSelector != nil {
					labelLists++
				}
				return c.List(ctx, list, opts...)
			}})
		s := Sync[*corev1.ConfigMap]([]client.Object{&corev1.Secret{}}, nil)
		if indexed {
			b = b.WithIndex(&corev1.Secret{}, childindex.Field, func(o client.Object) []string {
				if ref := metav1.GetControllerOfNoCopy(o); ref != nil {
					return []string{string(ref.UID)}
				}
				return nil
			})
		}
		env := &Env{Client: b.Build(), Scheme: clientgoscheme.Scheme}
		rk, err := s.resolveKinds(parent, env)
		if err != nil {
			t.Fatal(err)
		}
		observed, _, err := s.observe(t.Context(), parent, env, rk.kinds, "owner")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, o := range observed.List(&corev1.Secret{}) {
			names = append(names, o.GetName())
		}
		if len(names) != 1 || names[0] != "mine" {
			t.Errorf("indexed %v: children %v, want [mine]", indexed, names)
		}
		if indexed && (fieldLists != 1 || labelLists != 0) {
			t.Errorf("with the index: %d lists by field, %d by label; want 1 and 0", fieldLists, labelLists)
		}
		if !indexed && labelLists != 1 {
			t.Errorf("without the index: %d lists by label, want 1", labelLists)
		}
	}
}

// namespacedCounter counts the scope lookups (a RESTMapper lookup each)
// of the client it wraps.
type namespacedCounter struct {
	client.Client
	lookups *int
}

func (c namespacedCounter) IsObjectNamespaced(obj runtime.Object) (bool, error) {
	*c.lookups++
	return c.Client.IsObjectNamespaced(obj)
}

// Sync looks its declared kinds up once, not on every reconcile, and again
// after a list of children failed (a kind whose CRD was deleted fails so).
func TestSyncLooksKindsUpOnce(t *testing.T) {
	mapper := apimeta.NewDefaultRESTMapper(nil)
	for _, kind := range []string{"Secret", "ConfigMap"} {
		mapper.Add(corev1.SchemeGroupVersion.WithKind(kind), apimeta.RESTScopeNamespace)
	}
	failList := false
	c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithRESTMapper(mapper).
		WithInterceptorFuncs(interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if failList {
				return &apimeta.NoKindMatchError{GroupKind: corev1.SchemeGroupVersion.WithKind("Secret").GroupKind()}
			}
			return c.List(ctx, list, opts...)
		}}).Build()
	lookups := 0
	env := &Env{Client: namespacedCounter{Client: c, lookups: &lookups}, Scheme: clientgoscheme.Scheme, Applier: &apply.Applier{}}
	parent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid-p"}}
	s := Sync([]client.Object{&corev1.Secret{}, &corev1.ConfigMap{}},
		func(context.Context, *corev1.ConfigMap, Children) ([]client.Object, Action, error) {
			return nil, Done(), nil
		})
	for range 3 {
		if _, err := s.resolveKinds(parent, env); err != nil {
			t.Fatal(err)
		}
	}
	if lookups != 2 {
		t.Errorf("3 resolutions of 2 kinds looked up %d times, want 2", lookups)
	}
	failList = true
	if _, err := s.Reconcile(t.Context(), parent, env); err == nil {
		t.Fatal("Reconcile with a failing list = nil")
	}
	if _, err := s.resolveKinds(parent, env); err != nil {
		t.Fatal(err)
	}
	if lookups != 4 {
		t.Errorf("after a failed list: %d lookups, want 4 (looked up again)", lookups)
	}
}
