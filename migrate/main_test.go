package migrate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/test/testkit"
)

// cluster is a full cluster: its controller manager runs the storage
// version migrator, so both of Run's methods are tested.
var cluster *testkit.Cluster

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(helperMain())
	}
	testkit.Main(m, testkit.Options{Full: true, Nodes: 1}, func(c *testkit.Cluster) { cluster = c })
}

// objectCount is the size of the upgrade scenario: 1,000 by default,
// KOPGO_MIGRATE_OBJECTS=10000 for the figure.
func objectCount(t *testing.T) int {
	t.Helper()
	if s := os.Getenv("KOPGO_MIGRATE_OBJECTS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("KOPGO_MIGRATE_OBJECTS=%q: %v", s, err)
		}
		return n
	}
	return 1000
}

var crdSeq atomic.Int64

// widgetCRD is a CRD with one version, v1, in a group of its own (each
// test upgrades its own CRD).
func widgetCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	group := fmt.Sprintf("t%d.migrate.kopgo.dev", crdSeq.Add(1))
	props := map[string]apiextensionsv1.JSONSchemaProps{
		"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"size":  {Type: "integer"},
			"color": {Type: "string"},
			"owner": {Type: "string"},
		}},
		"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"ready": {Type: "boolean"},
		}},
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema:       &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
			}},
		},
	}
}

func widget(crd *apiextensionsv1.CustomResourceDefinition, version, ns, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: crd.Spec.Group, Version: version, Kind: "Widget"})
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func widgetName(i int) string { return fmt.Sprintf("w-%05d", i) }

// applier is the field manager of the objects written by server-side
// apply.
const applier = "tenant-apply"

// populate creates n widgets at version: the even ones by server-side
// apply (manager tenant-apply), the odd ones by create. It returns the
// number of failed writes (and the first error).
func populate(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, version, ns string, n int) (int, error) {
	c := cluster.Client()
	return parallel(n, 8, func(i int) error {
		u := widget(crd, version, ns, widgetName(i), map[string]any{"size": int64(i), "color": "blue"})
		if i%2 == 0 {
			return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(applier), client.ForceOwnership)
		}
		return c.Create(ctx, u, client.FieldOwner("tenant-create"))
	})
}

// applyAll applies every widget at version as tenant-apply, with a new
// color: what a user's `kubectl apply --server-side` of all of them does.
func applyAll(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, version, ns string, n int) (int, error) {
	c := cluster.Client()
	return parallel(n, 8, func(i int) error {
		u := widget(crd, version, ns, widgetName(i), map[string]any{"size": int64(i), "color": "green"})
		return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(applier), client.ForceOwnership)
	})
}

// parallel runs f(0..n-1) on workers goroutines and counts the failures.
func parallel(n, workers int, f func(i int) error) (int, error) {
	var (
		mu     sync.Mutex
		failed int
		first  error
		wg     sync.WaitGroup
		next   atomic.Int64
	)
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					mu.Lock()
					failed++
					if first == nil {
						first = fmt.Errorf("widget %s: %w", widgetName(i), err)
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return failed, first
}

// storedVersions counts the widgets of ns by the apiVersion etcd holds
// them at.
func storedVersions(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition, ns string, n int) map[string]int {
	t.Helper()
	counts := map[string]int{}
	var mu sync.Mutex
	if failed, err := parallel(n, 8, func(i int) error {
		s, err := cluster.Stored(t.Context(), testkit.StorageKey(crd.Spec.Group, "widgets", ns, widgetName(i)))
		if err != nil {
			return err
		}
		mu.Lock()
		counts[strings.TrimPrefix(s.APIVersion(), crd.Spec.Group+"/")]++
		mu.Unlock()
		return nil
	}); failed > 0 {
		t.Fatalf("read %d widgets from etcd: %d failed: %v", n, failed, err)
	}
	return counts
}

// putStoredAt writes a widget straight into etcd encoded at version, as an
// API server that has not seen the new storage version would.
func putStoredAt(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, ns, name, version string) (int64, error) {
	key := testkit.StorageKey(crd.Spec.Group, "widgets", ns, name)
	s, err := cluster.Stored(ctx, key)
	if err != nil {
		return 0, err
	}
	var obj map[string]any
	if err := json.Unmarshal(s.Value, &obj); err != nil {
		return 0, err
	}
	obj["apiVersion"] = crd.Spec.Group + "/" + version
	spec, _ := obj["spec"].(map[string]any)
	spec["owner"] = "lagging-apiserver"
	raw, err := json.Marshal(obj)
	if err != nil {
		return 0, err
	}
	return cluster.PutStored(ctx, key, raw)
}

func getCRD(t *testing.T, name string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := cluster.Client().Get(t.Context(), client.ObjectKey{Name: name}, crd); err != nil {
		t.Fatalf("get CRD %s: %v", name, err)
	}
	return crd
}
