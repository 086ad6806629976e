package status_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/status"
)

// newCRD is a namespaced CRD of group for kind, served as plural.
func newCRD(group, plural, kind string) *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: kind},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve,
				}},
			}},
		},
	}
}

// createCRD creates crd, deleted when the test ends.
func createCRD(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	c := cluster.Client()
	if err := c.Create(t.Context(), crd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// t.Context() is done by the time cleanups run.
		if err := c.Delete(context.Background(), crd); client.IgnoreNotFound(err) != nil {
			t.Error(err)
		}
	})
}

// crdCondition returns the status of the condition of type ct, "" when
// absent.
func crdCondition(crd *apiextensionsv1.CustomResourceDefinition, ct apiextensionsv1.CustomResourceDefinitionConditionType) apiextensionsv1.ConditionStatus {
	for _, c := range crd.Status.Conditions {
		if c.Type == ct {
			return c.Status
		}
	}
	return ""
}

// readBoth reads the CRD named name typed (as from a cache) and
// unstructured (as from a dynamic client), and checks that both read the
// same readiness.
func readBoth(t *testing.T, name string) (*apiextensionsv1.CustomResourceDefinition, status.Readiness) {
	t.Helper()
	c := cluster.Client()
	var typed apiextensionsv1.CustomResourceDefinition
	if err := c.Get(t.Context(), client.ObjectKey{Name: name}, &typed); err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	if err := c.Get(t.Context(), client.ObjectKey{Name: name}, u); err != nil {
		t.Fatal(err)
	}
	r := status.ReadinessOf(&typed)
	if ur := status.ReadinessOf(u); ur.State != r.State && u.GetResourceVersion() == typed.ResourceVersion {
		t.Errorf("the same CRD reads %s typed and %s unstructured", r.State, ur.State)
	}
	return &typed, r
}

// A CRD child is not ready until the API server has established it (its
// custom resources cannot be created before), and ready from then on; a
// CRD whose kind another CRD of the group holds already is Failed.
func TestReadinessOfCRDFromTheAPIServer(t *testing.T) {
	group := fmt.Sprintf("r%d.readiness.kopgo.dev", time.Now().UnixNano())
	gadgets := newCRD(group, "gadgets", "Gadget")
	createCRD(t, gadgets)
	// As created: the API server has not looked at its names yet.
	if r := status.ReadinessOf(gadgets); r.State != status.StateInProgress || r.Reason != "Establishing" {
		t.Errorf("a CRD just created: %+v, want InProgress Establishing", r)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		crd, r := readBoth(t, gadgets.Name)
		established := crdCondition(crd, apiextensionsv1.Established) == apiextensionsv1.ConditionTrue
		if ready := r.State == status.StateCurrent; ready != established {
			t.Fatalf("Established=%q read as %+v", crdCondition(crd, apiextensionsv1.Established), r)
		}
		if established {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not established after 20 s: %+v", r)
		}
	}

	// Another CRD for the same kind: the API server refuses its names.
	clash := newCRD(group, "gizmos", "Gadget")
	createCRD(t, clash)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		crd, r := readBoth(t, clash.Name)
		if crdCondition(crd, apiextensionsv1.NamesAccepted) == apiextensionsv1.ConditionFalse {
			if r.State != status.StateFailed || r.Reason != "NamesNotAccepted" {
				t.Errorf("a CRD whose names conflict: %+v, want Failed NamesNotAccepted", r)
			}
			t.Logf("%s", r.Message)
			break
		}
		if r.State == status.StateCurrent {
			t.Fatalf("a CRD whose names were not accepted yet reads %+v", r)
		}
		if time.Now().After(deadline) {
			t.Fatalf("names still not refused after 20 s: %+v", r)
		}
	}
}
