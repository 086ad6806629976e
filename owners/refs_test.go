package owners_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/owners"
)

var (
	refA  = owners.ObjectRef{Kind: "ConfigMap", Namespace: "shop", Name: "a"}
	refB  = owners.ObjectRef{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "b"}
	refNS = owners.ObjectRef{Kind: "Namespace", Name: "team"}
)

func TestObjectRef(t *testing.T) {
	widget := &unstructured.Unstructured{}
	widget.SetAPIVersion("example.com/v2")
	widget.SetKind("Widget")
	widget.SetNamespace("shop")
	widget.SetName("w")
	tests := []struct {
		name       string
		obj        client.Object
		want       owners.ObjectRef
		wantString string
		wantErr    bool
	}{
		{name: "typed, core group", obj: configMap("shop", "a"), want: refA, wantString: "ConfigMap shop/a"},
		{name: "typed, named group", obj: deploy("shop", "b", "u"), want: refB, wantString: "Deployment.apps shop/b"},
		{name: "unstructured", obj: widget, want: owners.ObjectRef{Group: "example.com", Kind: "Widget", Namespace: "shop", Name: "w"}, wantString: "Widget.example.com shop/w"},
		{name: "partial metadata", obj: &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "team"}},
			want: refNS, wantString: "Namespace team"},
		{name: "not in the scheme", obj: &notRegistered{}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := owners.RefOf(tt.obj, scheme)
			if tt.wantErr {
				if !koperrors.IsInvalid(err) {
					t.Fatalf("RefOf error %v, want Invalid", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("RefOf = %#v, want %#v", got, tt.want)
			}
			if got.String() != tt.wantString {
				t.Errorf("String() = %q, want %q", got.String(), tt.wantString)
			}
			if got.Key() != client.ObjectKeyFromObject(tt.obj) {
				t.Errorf("Key() = %v", got.Key())
			}
		})
	}
}

func TestRefSet(t *testing.T) {
	existing := owners.NewRefSet(refA, refB, refNS, refA)
	desired := owners.NewRefSet(refB)
	tests := []struct {
		name string
		got  owners.RefSet
		want []owners.ObjectRef // sorted
	}{
		{"duplicates collapse", existing, []owners.ObjectRef{refA, refNS, refB}},
		{"difference: what to prune", existing.Difference(desired), []owners.ObjectRef{refA, refNS}},
		{"difference with nil", existing.Difference(nil), []owners.ObjectRef{refA, refNS, refB}},
		{"difference of nil", owners.RefSet(nil).Difference(existing), nil},
		{"union", desired.Union(owners.NewRefSet(refNS)), []owners.ObjectRef{refNS, refB}},
		{"union with nil", owners.RefSet(nil).Union(desired), []owners.ObjectRef{refB}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.got.Sorted()); diff != "" {
				t.Errorf("refs (-want +got):\n%s", diff)
			}
			if tt.got.Len() != len(tt.want) {
				t.Errorf("Len() = %d, want %d", tt.got.Len(), len(tt.want))
			}
		})
	}
	// Set operations return new sets: the operands are untouched.
	if existing.Len() != 3 || desired.Len() != 1 {
		t.Errorf("operands changed: %v, %v", existing, desired)
	}
	s := owners.RefSet{}
	s.Add(refA, refB)
	s.Delete(refA, refNS)
	if s.Has(refA) || !s.Has(refB) || s.String() != "{Deployment.apps shop/b}" {
		t.Errorf("after Add and Delete: %v", s)
	}
	if !cmp.Equal(owners.NewRefSet(refA, refB), owners.NewRefSet(refB, refA)) {
		t.Error("equal sets compare unequal with go-cmp")
	}
	// Compare sorts by group first: the core group ("") comes first.
	refs := []owners.ObjectRef{refB, refNS, refA}
	slices.SortFunc(refs, owners.ObjectRef.Compare)
	if diff := cmp.Diff([]owners.ObjectRef{refA, refNS, refB}, refs); diff != "" {
		t.Errorf("sorted (-want +got):\n%s", diff)
	}
}
