package testkit_test

import (
	"errors"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/test/testkit"
)

// TestUpgradeSteps walks testkit.Upgrade's steps and reads what etcd
// stores at each: an object stays stored at v1 until it is written again,
// and the API server refuses to drop v1 while storedVersions names it.
func TestUpgradeSteps(t *testing.T) {
	ctx := t.Context()
	ns := cluster.Namespace(t)
	const group = "upgrade.testkit.kopgo.dev"
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: new(true),
				}},
			}},
		},
	}
	u := &testkit.Upgrade{Cluster: cluster, CRD: crd, To: "v2"}
	gadget := func(version, name string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"size": int64(1)}}}
		o.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: version, Kind: "Gadget"})
		o.SetNamespace(ns)
		o.SetName(name)
		return o
	}
	storedAt := func(name string) string {
		t.Helper()
		s, err := cluster.Stored(ctx, testkit.StorageKey(group, "gadgets", ns, name))
		if err != nil {
			t.Fatal(err)
		}
		return s.APIVersion()
	}
	c := cluster.Client()

	if err := u.Install(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, gadget("v1", "old")); err != nil {
		t.Fatal(err)
	}
	if err := u.AddStorageVersion(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, gadget("v1", "new")); err != nil {
		t.Fatal(err)
	}
	if got, want := storedAt("old"), group+"/v1"; got != want {
		t.Errorf("old gadget stored at %s, want %s", got, want)
	}
	if got, want := storedAt("new"), group+"/v2"; got != want {
		t.Errorf("gadget created after the switch, at v1, stored at %s, want %s", got, want)
	}
	if _, err := cluster.Stored(ctx, testkit.StorageKey(group, "gadgets", ns, "none")); !errors.Is(err, testkit.ErrNotStored) {
		t.Errorf("a missing key: %v, want ErrNotStored", err)
	}

	if err := u.Unserve(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "old"}, gadget("v1", "old")); err == nil {
		t.Error("get at v1 after Unserve succeeded, want an error")
	}
	err := u.Drop(ctx)
	if err == nil || !strings.Contains(err.Error(), "storedVersions") {
		t.Fatalf("Drop with v1 in storedVersions: %v, want the API server's refusal naming storedVersions", err)
	}
	t.Logf("refused as expected: %v", err)
}
