package meta_test

import (
	"fmt"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kopmeta "github.com/kopgo/kopgo/meta"
)

func TestRefOf(t *testing.T) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("example.com/v1")
	u.SetKind("Widget")
	u.SetName("w")
	withTypeMeta := &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: "reader"},
	}
	var nilCM *corev1.ConfigMap
	tests := []struct {
		name    string
		obj     client.Object
		want    kopmeta.ObjectRef
		wantStr string
	}{
		{"typed without TypeMeta", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}},
			kopmeta.ObjectRef{Kind: "ConfigMap", Namespace: "ns", Name: "cm"}, "ConfigMap ns/cm"},
		{"typed with TypeMeta", withTypeMeta,
			kopmeta.ObjectRef{Group: rbacv1.GroupName, Kind: "ClusterRole", Name: "reader"}, "ClusterRole reader"},
		{"unstructured", u,
			kopmeta.ObjectRef{Group: "example.com", Kind: "Widget", Name: "w"}, "Widget w"},
		{"unstructured without kind", &unstructured.Unstructured{Object: map[string]any{}},
			kopmeta.ObjectRef{Kind: "Unstructured"}, "Unstructured"},
		{"typed nil pointer", nilCM, kopmeta.ObjectRef{}, ""},
		{"nil", nil, kopmeta.ObjectRef{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := kopmeta.RefOf(tt.obj)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("RefOf() (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantStr, got.String()); diff != "" {
				t.Errorf("String() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestObjectRefCompare(t *testing.T) {
	refs := []kopmeta.ObjectRef{
		{Group: "apps", Kind: "Deployment", Namespace: "b", Name: "x"},
		{Kind: "ConfigMap", Namespace: "b", Name: "y"},
		{Kind: "ConfigMap", Namespace: "a", Name: "z"},
		{Group: "apps", Kind: "Deployment", Namespace: "a", Name: "x"},
		{Kind: "ConfigMap", Namespace: "a", Name: "a"},
	}
	slices.SortFunc(refs, kopmeta.ObjectRef.Compare)
	want := []string{"ConfigMap a/a", "ConfigMap a/z", "ConfigMap b/y", "Deployment a/x", "Deployment b/x"}
	var got []string
	for _, r := range refs {
		got = append(got, r.String())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sorted (-want +got):\n%s", diff)
	}
	if a := (kopmeta.ObjectRef{Kind: "ConfigMap", Name: "a"}); a.Compare(a) != 0 {
		t.Error("a ref does not compare equal to itself")
	}
}

func ExampleRefOf() {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "settings"}}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}
	fmt.Println(kopmeta.RefOf(cm))
	fmt.Println(kopmeta.RefOf(ns))
	// Output:
	// ConfigMap team-a/settings
	// Namespace team-a
}

// The children a parent wants against those that exist: what to prune.
func ExampleObjectRef() {
	existing := sets.New(
		kopmeta.ObjectRef{Kind: "ConfigMap", Namespace: "shop", Name: "web-config"},
		kopmeta.ObjectRef{Kind: "ConfigMap", Namespace: "shop", Name: "web-old"},
		kopmeta.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"},
	)
	desired := sets.New(
		kopmeta.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"},
		kopmeta.ObjectRef{Kind: "ConfigMap", Namespace: "shop", Name: "web-config"},
	)
	prune := existing.Difference(desired).UnsortedList()
	slices.SortFunc(prune, kopmeta.ObjectRef.Compare)
	for _, r := range prune {
		fmt.Println("prune", r)
	}
	// Output:
	// prune ConfigMap shop/web-old
}
