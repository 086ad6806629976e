package migrate_test

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopgo/kopgo/migrate"
)

// An object applied at v1, whose v1 is about to be removed: its entry is
// rewritten to name v2, with the field v2 renamed.
func ExampleRewriteManagedFields() {
	entries := []metav1.ManagedFieldsEntry{{
		Manager: "tenant", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "example.com/v1",
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:size":{},"f:color":{}}}`),
	}}
	fmt.Println(migrate.Stale(entries, "example.com", "v2"))
	out, changed, err := migrate.RewriteManagedFields(entries, "example.com", "v2",
		[]migrate.Rename{{Version: "v1", From: "spec.size", To: "spec.replicas"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(changed, out[0].APIVersion, out[0].FieldsV1.GetRawString())
	// Output:
	// [v1]
	// true example.com/v2 {"f:spec":{"f:color":{},"f:replicas":{}}}
}
