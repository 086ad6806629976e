package database_test

import (
	"strings"
	"testing"

	"github.com/kopgo/kopgo/crdtest"
	"github.com/kopgo/kopgo/examples/database/api/v1alpha1"
)

// The storage fields cannot change once set, nor storageClassName be
// removed (a field's own rule runs only while the field is set: the
// spec-level rule catches the removal), checked offline as the API server
// would.
func TestStorageCannotChange(t *testing.T) {
	crds, err := crdtest.ReadCRDs("config/crd")
	if err != nil || len(crds) != 1 {
		t.Fatalf("CRDs: %v (%d)", err, len(crds))
	}
	v, err := crdtest.NewValidator(crds[0], "v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	fast, slow := "fast", "slow"
	stored := newDB(func(db *v1alpha1.Database) { db.Spec.StorageClassName, db.ResourceVersion = &fast, "7" })
	for _, tc := range []struct {
		name string
		edit func(*v1alpha1.Database)
		want string // "" for accepted
	}{
		{"unchanged", func(*v1alpha1.Database) {}, ""},
		{"a new version", func(db *v1alpha1.Database) { db.Spec.Version = "17.3" }, ""},
		{"another class", func(db *v1alpha1.Database) { db.Spec.StorageClassName = &slow }, "storageClassName cannot change"},
		{"the class removed", func(db *v1alpha1.Database) { db.Spec.StorageClassName = nil }, "storageClassName cannot be removed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed := stored.DeepCopy()
			tc.edit(changed)
			errs := v.ValidateUpdate(t.Context(), changed, stored)
			switch {
			case tc.want == "" && len(errs) > 0:
				t.Errorf("refused: %v", errs)
			case tc.want != "" && (len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), tc.want)):
				t.Errorf("errors %v, want one saying %q", errs, tc.want)
			}
		})
	}
}
