package meta_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	kopmeta "github.com/kopgo/kopgo/meta"
)

// full sets every kind of field the Builder has.
func full() *kopmeta.Builder {
	return kopmeta.New("web").Namespace("shop").
		Labels(map[string]string{"a": "1"}).Annotations(map[string]string{"example.com/x": "1"}).Finalizer("example.com/f").
		Owner(deploy("shop", "o", "1"), scheme).
		ControlledBy(deploy("shop", "c", "2"), scheme)
}

func TestBuild(t *testing.T) {
	tests := []struct {
		name string
		b    *kopmeta.Builder
		want metav1.ObjectMeta
	}{
		{"name only", kopmeta.New("web"), metav1.ObjectMeta{Name: "web"}},
		{"generateName", kopmeta.GenerateName("web-").Namespace("shop"), metav1.ObjectMeta{GenerateName: "web-", Namespace: "shop"}},
		{"everything", full(), metav1.ObjectMeta{
			Name: "web", Namespace: "shop",
			Labels:      map[string]string{"a": "1"},
			Annotations: map[string]string{"example.com/x": "1"},
			Finalizers:  []string{"example.com/f"},
			OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "apps/v1", Kind: "Deployment", Name: "o", UID: "1"},
				{APIVersion: "apps/v1", Kind: "Deployment", Name: "c", UID: "2", Controller: new(true), BlockOwnerDeletion: new(true)},
			},
		}},
		{"later values win", kopmeta.New("web").Labels(map[string]string{"a": "1"}).Labels(map[string]string{"a": "2", "b": "1"}).
			Annotations(map[string]string{"example.com/x": "1"}).Annotations(map[string]string{"example.com/x": "2"}),
			metav1.ObjectMeta{Name: "web", Labels: map[string]string{"a": "2", "b": "1"}, Annotations: map[string]string{"example.com/x": "2"}}},
		{"finalizer added twice", kopmeta.New("web").Finalizer("example.com/f").Finalizer("example.com/g").Finalizer("example.com/f"),
			metav1.ObjectMeta{Name: "web", Finalizers: []string{"example.com/f", "example.com/g"}}},
		{"same owner twice is one reference, a re-created one's UID wins", kopmeta.New("web").Owner(deploy("", "d", "1"), scheme).Owner(deploy("", "d", "2"), scheme),
			metav1.ObjectMeta{Name: "web", OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "2"}}}},
		{"owner after controller stays controller", kopmeta.New("web").ControlledBy(deploy("", "d", "1"), scheme).Owner(deploy("", "d", "1"), scheme),
			metav1.ObjectMeta{Name: "web", OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "1", Controller: new(true), BlockOwnerDeletion: new(true)}}}},
		{"owner then controller becomes controller", kopmeta.New("web").Owner(deploy("", "d", "1"), scheme).ControlledBy(deploy("", "d", "1"), scheme),
			metav1.ObjectMeta{Name: "web", OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "1", Controller: new(true), BlockOwnerDeletion: new(true)}}}},
		{"kind from TypeMeta", kopmeta.New("web").Owner(withTypeMeta(deploy("", "d", "1")), nil),
			metav1.ObjectMeta{Name: "web", OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "1"}}}},
		{"unstructured owner", kopmeta.New("web").ControlledBy(unstructuredOwner(), scheme),
			metav1.ObjectMeta{Name: "web", OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "example.com/v1", Kind: "Web", Name: "u", UID: "9", Controller: new(true), BlockOwnerDeletion: new(true)}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.b.Build()
			if err != nil {
				t.Fatalf("Build() error: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Build() (-want +got):\n%s", diff)
			}
		})
	}
}

func withTypeMeta(d *appsv1.Deployment) *appsv1.Deployment {
	d.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	return d
}

func unstructuredOwner() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("example.com/v1")
	u.SetKind("Web")
	u.SetName("u")
	u.SetUID("9")
	return u
}

// TestApplyConfigurationMatchesBuild compares the two forms by their JSON,
// which is what reaches the API server.
func TestApplyConfigurationMatchesBuild(t *testing.T) {
	tests := []struct {
		name string
		b    *kopmeta.Builder
	}{
		{"name only", kopmeta.New("web")},
		{"generateName", kopmeta.GenerateName("web-").Namespace("shop")},
		{"everything", full()},
		{"empty label value", kopmeta.New("web").Labels(map[string]string{"k": ""})},
		{"reference without controller fields", kopmeta.New("web").Owner(ownerFor(metav1.OwnerReference{APIVersion: "v1", Kind: "Secret", Name: "s", UID: "3"}, ""), nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			om, err := tt.b.Build()
			if err != nil {
				t.Fatalf("Build() error: %v", err)
			}
			ac, err := tt.b.ApplyConfiguration()
			if err != nil {
				t.Fatalf("ApplyConfiguration() error: %v", err)
			}
			typed, err := json.Marshal(om)
			if err != nil {
				t.Fatal(err)
			}
			applyForm, err := json.Marshal(ac)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(typed), string(applyForm)); diff != "" {
				t.Errorf("JSON (-Build +ApplyConfiguration):\n%s", diff)
			}
		})
	}
}

// TestResultsDoNotAlias changes every map, slice and pointer of one result
// and checks that the Builder, later results and clones are unaffected.
func TestResultsDoNotAlias(t *testing.T) {
	want, err := full().Build()
	if err != nil {
		t.Fatal(err)
	}
	mutate := func(om *metav1.ObjectMeta) {
		om.Labels["a"] = "changed"
		om.Labels["new"] = "x"
		om.Annotations["example.com/x"] = "changed"
		om.Finalizers[0] = "changed"
		om.OwnerReferences[0].Name = "changed"
		*om.OwnerReferences[1].Controller = false
		*om.OwnerReferences[1].BlockOwnerDeletion = false
	}
	tests := []struct {
		name string
		// produce makes a result from b and spoils it.
		produce func(t *testing.T, b *kopmeta.Builder)
	}{
		{"Build", func(t *testing.T, b *kopmeta.Builder) {
			t.Helper()
			om, err := b.Build()
			if err != nil {
				t.Fatal(err)
			}
			mutate(&om)
		}},
		{"ApplyConfiguration", func(t *testing.T, b *kopmeta.Builder) {
			t.Helper()
			ac, err := b.ApplyConfiguration()
			if err != nil {
				t.Fatal(err)
			}
			ac.Labels["a"] = "changed"
			ac.Annotations["example.com/x"] = "changed"
			ac.Finalizers[0] = "changed"
			*ac.OwnerReferences[0].Name = "changed"
			*ac.OwnerReferences[1].Controller = false
		}},
		{"ApplyTo", func(t *testing.T, b *kopmeta.Builder) {
			t.Helper()
			d := deploy("", "", "")
			if err := b.ApplyTo(d); err != nil {
				t.Fatal(err)
			}
			mutate(&d.ObjectMeta)
		}},
		{"Clone", func(t *testing.T, b *kopmeta.Builder) {
			t.Helper()
			c := b.Clone().Labels(map[string]string{"a": "changed"}).Annotations(map[string]string{"example.com/x": "changed"}).Finalizer("example.com/more").
				Owner(deploy("shop", "more", "3"), scheme)
			om, err := c.Build()
			if err != nil {
				t.Fatal(err)
			}
			mutate(&om)
		}},
		{"Labels and Annotations arguments", func(_ *testing.T, b *kopmeta.Builder) {
			labels, annotations := map[string]string{"a": "1"}, map[string]string{"example.com/x": "1"}
			b.Labels(labels).Annotations(annotations)
			labels["a"], annotations["example.com/x"] = "changed", "changed"
		}},
		{"owner argument", func(_ *testing.T, b *kopmeta.Builder) {
			owner := deploy("shop", "c", "2")
			b.ControlledBy(owner, scheme)
			owner.Name, owner.UID = "changed", "changed"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := full()
			tt.produce(t, b)
			got, err := b.Build()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("a later Build() was changed through an earlier result (-want +got):\n%s", diff)
			}
		})
	}
}

// TestClonesAreIndependent appends to two clones of one base: with a shared
// backing array the second append would overwrite the first.
func TestClonesAreIndependent(t *testing.T) {
	base := kopmeta.New("web").Finalizer("example.com/a").Finalizer("example.com/b").Finalizer("example.com/c").
		Owner(deploy("", "x", "1"), scheme).Owner(deploy("", "y", "2"), scheme).Owner(deploy("", "z", "3"), scheme).
		Labels(map[string]string{"base": "1"})
	one := base.Clone().Finalizer("example.com/one").Owner(deploy("", "one", "4"), scheme).Labels(map[string]string{"one": "1"})
	two := base.Clone().Finalizer("example.com/two").Owner(deploy("", "two", "5"), scheme).Labels(map[string]string{"two": "1"})
	tests := []struct {
		name       string
		b          *kopmeta.Builder
		finalizer  string
		owner      string
		wantLabels map[string]string
	}{
		{"base", base, "example.com/c", "z", map[string]string{"base": "1"}},
		{"one", one, "example.com/one", "one", map[string]string{"base": "1", "one": "1"}},
		{"two", two, "example.com/two", "two", map[string]string{"base": "1", "two": "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			om, err := tt.b.Build()
			if err != nil {
				t.Fatal(err)
			}
			got := struct {
				Finalizer, Owner string
				Labels           map[string]string
			}{om.Finalizers[len(om.Finalizers)-1], om.OwnerReferences[len(om.OwnerReferences)-1].Name, om.Labels}
			want := struct {
				Finalizer, Owner string
				Labels           map[string]string
			}{tt.finalizer, tt.owner, tt.wantLabels}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("last finalizer, last owner and labels (-want +got):\n%s", diff)
			}
		})
	}
}
