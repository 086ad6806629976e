// Package config_test checks the example's kustomize overlays without
// kustomize: every file they name exists, every manifest is a valid object
// of a known kind (decoded strictly: a misspelt field fails), and the
// pieces fit together as `kubectl apply -k config/default` needs them to.
package config_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	kubebuilderv1 "github.com/kopgo/kopgo/examples/kubebuilder/api/v1"
)

// kustomization is the part of a kustomization.yaml this test reads.
type kustomization struct {
	Namespace  string   `json:"namespace"`
	NamePrefix string   `json:"namePrefix"`
	Resources  []string `json:"resources"`
	Patches    []struct {
		Path   string `json:"path"`
		Target struct {
			Kind string `json:"kind"`
		} `json:"target"`
	} `json:"patches"`
}

func TestOverlays(t *testing.T) {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(kubebuilderv1.AddToScheme(s))
	decoder := serializer.NewCodecFactory(s, serializer.EnableStrict).UniversalDeserializer()

	// Every object config/default includes, through the overlays it names.
	var objs []runtime.Object
	var patches []string
	var load func(dir string)
	load = func(dir string) {
		var k kustomization
		readYAML(t, filepath.Join(dir, "kustomization.yaml"), &k)
		if len(k.Resources) == 0 {
			t.Errorf("%s/kustomization.yaml names no resources", dir)
		}
		for _, r := range k.Resources {
			path := filepath.Join(dir, r)
			if fi, err := os.Stat(path); err != nil {
				t.Errorf("%s/kustomization.yaml: %v", dir, err)
				continue
			} else if fi.IsDir() {
				load(path)
				continue
			}
			objs = append(objs, decodeAll(t, decoder, path)...)
		}
		for _, p := range k.Patches {
			patches = append(patches, filepath.Join(dir, p.Path))
		}
	}
	load("default")
	var k kustomization
	readYAML(t, filepath.Join("default", "kustomization.yaml"), &k)
	if !strings.HasPrefix(k.Namespace, strings.TrimSuffix(k.NamePrefix, "-")) {
		t.Errorf("namespace %q does not start with the name prefix %q", k.Namespace, k.NamePrefix)
	}

	roles := map[string]*rbacv1.ClusterRole{}
	var deployment *appsv1.Deployment
	var service *corev1.Service
	var accounts, crds []string
	var bindings []rbacv1.Subject
	var boundRoles []string
	for _, o := range objs {
		switch o := o.(type) {
		case *rbacv1.ClusterRole:
			roles[o.Name] = o
		case *rbacv1.ClusterRoleBinding:
			boundRoles = append(boundRoles, o.RoleRef.Name)
			bindings = append(bindings, o.Subjects...)
		case *rbacv1.RoleBinding:
			bindings = append(bindings, o.Subjects...)
		case *corev1.ServiceAccount:
			accounts = append(accounts, o.Name)
		case *appsv1.Deployment:
			deployment = o
		case *corev1.Service:
			service = o
		case *apiextensionsv1.CustomResourceDefinition:
			crds = append(crds, o.Name)
		}
	}
	if !slices.Contains(crds, "configsets."+kubebuilderv1.GroupVersion.Group) {
		t.Errorf("CRDs %v: the ConfigSet CRD is missing", crds)
	}
	manager := roles["manager-role"]
	if manager == nil || len(manager.Rules) == 0 {
		t.Fatalf("no ClusterRole manager-role with rules (config/rbac/role.yaml, from controller-gen)")
	}
	for _, r := range []string{"manager-role", "metrics-auth-role"} {
		if !slices.Contains(boundRoles, r) {
			t.Errorf("ClusterRole %s is bound to no one", r)
		}
	}
	if deployment == nil || service == nil {
		t.Fatalf("config/default has no Deployment (%v) or no metrics Service (%v)", deployment, service)
	}
	sa := deployment.Spec.Template.Spec.ServiceAccountName
	if !slices.Contains(accounts, sa) {
		t.Errorf("the Deployment runs as %q, which is not among the service accounts %v", sa, accounts)
	}
	for _, b := range bindings {
		if b.Kind != rbacv1.ServiceAccountKind || b.Name != sa {
			t.Errorf("a binding's subject is %s %s, not the manager's service account %s", b.Kind, b.Name, sa)
		}
	}

	// The metrics patch gives the manager the port the Service targets.
	if len(patches) != 1 {
		t.Fatalf("patches %v, want the metrics patch", patches)
	}
	patched := applyPatch(t, deployment, patches[0])
	args := patched.Spec.Template.Spec.Containers[0].Args
	port := service.Spec.Ports[0].TargetPort.String()
	if !slices.Contains(args, "--metrics-bind-address=:"+port) {
		t.Errorf("manager args %v after the patch: no --metrics-bind-address=:%s (the metrics Service's target port)", args, port)
	}
	if service.Spec.Selector["control-plane"] != deployment.Spec.Template.Labels["control-plane"] {
		t.Errorf("the metrics Service selects %v, the manager's pods are labelled %v", service.Spec.Selector, deployment.Spec.Template.Labels)
	}

	// The sample is a valid ConfigSet.
	for _, o := range decodeAll(t, decoder, filepath.Join("samples", "kubebuilder_v1_configset.yaml")) {
		if cs, ok := o.(*kubebuilderv1.ConfigSet); !ok || len(cs.Spec.Configs) == 0 {
			t.Errorf("sample %T %+v: want a ConfigSet with configs", o, o)
		}
	}
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// decodeAll decodes each document of a manifest file, strictly.
func decodeAll(t *testing.T, decoder runtime.Decoder, path string) []runtime.Object {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []runtime.Object
	for doc := range bytes.SplitSeq(data, []byte("\n---")) {
		if len(bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(doc), []byte("---")))) == 0 {
			continue
		}
		obj, _, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		out = append(out, obj)
	}
	return out
}

// applyPatch applies the JSON 6902 patch in path to d, as kustomize does.
func applyPatch(t *testing.T, d *appsv1.Deployment, path string) *appsv1.Deployment {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ops, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	patch, err := jsonpatch.DecodePatch(ops)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	doc, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if doc, err = patch.Apply(doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out appsv1.Deployment
	if err := json.Unmarshal(doc, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}
