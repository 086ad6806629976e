package migrate_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopgo/kopgo/migrate"
)

func entry(manager string, op metav1.ManagedFieldsOperationType, version, fields string, at int) metav1.ManagedFieldsEntry {
	t := metav1.NewTime(time.Date(2026, 1, 1, at, 0, 0, 0, time.UTC))
	return metav1.ManagedFieldsEntry{
		Manager: manager, Operation: op, APIVersion: "example.com/" + version,
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields), Time: &t,
	}
}

func TestRewriteManagedFields(t *testing.T) {
	const apply, update = metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate
	other := entry("kubectl", update, "v1", `{"f:spec":{"f:x":{}}}`, 1)
	other.APIVersion = "other.io/v1"
	for _, tc := range []struct {
		name    string
		in      []metav1.ManagedFieldsEntry
		renames []migrate.Rename
		want    []metav1.ManagedFieldsEntry
		changed bool
	}{{
		name: "nothing to do",
		in:   []metav1.ManagedFieldsEntry{entry("a", apply, "v2", `{"f:spec":{}}`, 1), other},
		want: []metav1.ManagedFieldsEntry{entry("a", apply, "v2", `{"f:spec":{}}`, 1), other},
	}, {
		name:    "apply entry moves to the storage version",
		in:      []metav1.ManagedFieldsEntry{entry("a", apply, "v1", `{"f:spec":{"f:size":{}}}`, 1)},
		want:    []metav1.ManagedFieldsEntry{entry("a", apply, "v2", `{"f:spec":{"f:size":{}}}`, 1)},
		changed: true,
	}, {
		name: "update entries of one manager merge",
		in: []metav1.ManagedFieldsEntry{
			entry("ctl", update, "v2", `{"f:spec":{"f:color":{}}}`, 1),
			entry("ctl", update, "v1", `{"f:spec":{"f:size":{}}}`, 3),
			entry("ctl", update, "v0", `{"f:status":{"f:ready":{}}}`, 2),
		},
		want:    []metav1.ManagedFieldsEntry{entry("ctl", update, "v2", `{"f:spec":{"f:color":{},"f:size":{}},"f:status":{"f:ready":{}}}`, 3)},
		changed: true,
	}, {
		name:    "renamed field",
		in:      []metav1.ManagedFieldsEntry{entry("a", apply, "v1", `{"f:spec":{".":{},"f:size":{}},"f:metadata":{"f:labels":{"f:x":{}}}}`, 1)},
		renames: []migrate.Rename{{Version: "v1", From: "spec.size", To: "spec.replicas.count"}},
		want:    []metav1.ManagedFieldsEntry{entry("a", apply, "v2", `{"f:metadata":{"f:labels":{"f:x":{}}},"f:spec":{"f:replicas":{"f:count":{}}}}`, 1)},
		changed: true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed, err := migrate.RewriteManagedFields(tc.in, "example.com", "v2", tc.renames)
			if err != nil {
				t.Fatal(err)
			}
			if changed != tc.changed {
				t.Errorf("changed %t, want %t", changed, tc.changed)
			}
			if diff := cmp.Diff(tc.want, got, cmp.Transformer("fields", func(f *metav1.FieldsV1) string { return f.GetRawString() })); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRewriteManagedFieldsNamesTheField(t *testing.T) {
	in := []metav1.ManagedFieldsEntry{entry("a", metav1.ManagedFieldsOperationApply, "v1", `{"f:spec":`, 1)}
	_, _, err := migrate.RewriteManagedFields(in, "example.com", "v2", []migrate.Rename{{Version: "v1", From: "spec.a", To: "spec.b"}})
	const want = `metadata.managedFields[0].fieldsV1 (manager "a", v1): unexpected end of JSON input`
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}
