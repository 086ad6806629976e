package apply_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/kopgo/kopgo/apply"
)

func managedBy(managers ...string) []metav1.ManagedFieldsEntry {
	var entries []metav1.ManagedFieldsEntry
	for _, m := range managers {
		entries = append(entries, metav1.ManagedFieldsEntry{
			Manager: m, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1",
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:data":{"f:` + m + `":{}}}`),
		})
	}
	return entries
}

// KeepManagedFields keeps only our entries, whatever the object's form, and
// nothing else of the object changes.
func TestKeepManagedFields(t *testing.T) {
	typed := func(managers ...string) runtime.Object {
		return &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm", Labels: map[string]string{"a": "b"}, ManagedFields: managedBy(managers...)},
			Data:       map[string]string{"k": "v"},
		}
	}
	unstr := func(managers ...string) runtime.Object {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed(managers...))
		if err != nil {
			t.Fatal(err)
		}
		return &unstructured.Unstructured{Object: m}
	}
	partial := func(managers ...string) runtime.Object {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm", ManagedFields: managedBy(managers...)}}
	}
	strip := cache.TransformStripManagedFields()
	keep := apply.KeepManagedFields(owner)
	for name, build := range map[string]func(...string) runtime.Object{"typed": typed, "unstructured": unstr, "partial metadata": partial} {
		tests := []struct {
			name      string
			managers  []string
			transform toolscache.TransformFunc
			want      []string
		}{
			{"ours among others", []string{"kubectl", owner, "hpa"}, keep, []string{owner}},
			{"ours only", []string{owner}, keep, []string{owner}},
			{"not ours", []string{"kubectl"}, keep, nil},
			{"none", nil, keep, nil},
			{"twice", []string{"kubectl", owner}, func(in any) (any, error) {
				out, _ := keep(in)
				return keep(out)
			}, []string{owner}},
			{"after a strip", []string{"kubectl", owner}, func(in any) (any, error) {
				out, _ := strip(in)
				return keep(out)
			}, nil},
		}
		for _, tt := range tests {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				in := build(tt.managers...)
				out, err := tt.transform(in)
				if err != nil {
					t.Fatal(err)
				}
				want := build(tt.want...)
				if diff := cmp.Diff(want, out); diff != "" {
					t.Errorf("transformed object (-want +got):\n%s", diff)
				}
			})
		}
	}
	t.Run("not an object", func(t *testing.T) {
		tomb := toolscache.DeletedFinalStateUnknown{Key: "ns/cm"}
		out, err := keep(tomb)
		if err != nil || out != tomb {
			t.Errorf("transform of a tombstone = %v, %v; want it unchanged", out, err)
		}
	})
}

// Keep only this controller's managedFields entry in the cache.
func ExampleKeepManagedFields() {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings",
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}, {Manager: "settings-controller"}, {Manager: "hpa"}}}}
	transform := apply.KeepManagedFields("settings-controller")
	out, _ := transform(cm)
	obj, _ := apimeta.Accessor(out)
	for _, e := range obj.GetManagedFields() {
		fmt.Println(e.Manager)
	}
	// Output:
	// settings-controller
}
