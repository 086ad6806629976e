package operator

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	webappv1 "github.com/kopgo/kopgo/examples/webapp/api/v1alpha1"
)

// fuzzScheme is built once: a scheme per input would take most of the
// fuzzer's time.
var fuzzScheme = Scheme()

// FuzzValidate feeds validate WebApps of any name, image, port, replicas and
// config. It never panics, every error names a field of the WebApp, and a
// WebApp it accepts yields children the API server accepts: valid names,
// labels, ConfigMap keys and sizes, ports, registry field manager, and
// apply requests that the API server's YAML decoder reads.
//
// config is a list of "key=value" lines; pad adds that many bytes (modulo
// 2 MiB) to the first value, so that the 1 MiB limit is within reach.
//
//	go test ./examples/webapp/operator -run '^$' -fuzz FuzzValidate -fuzztime 60s
func FuzzValidate(f *testing.F) {
	f.Add("web", "default", "nginx:1.27", int32(8080), int32(2), true, "GREETING=hi\nlog.level=debug", uint32(0))
	f.Add("web.example", "default", "nginx", int32(0), int32(0), false, "", uint32(0))
	f.Add(strings.Repeat("a", 63), strings.Repeat("n", 63), "registry.example.com:5000/team/app@sha256:"+strings.Repeat("ab", 32), int32(65535), int32(100), true, "", uint32(0))
	f.Add(strings.Repeat("a", 64), "ns", "app", int32(1), int32(1), true, "", uint32(0))
	f.Add(strings.Repeat("a", 253), "ns", "app", int32(1), int32(1), true, "", uint32(0))
	f.Add("1web", "ns", "Nginx:::", int32(-1), int32(-1), true, "1X=\na=b=c\n.=dot", uint32(0))
	f.Add("web", "ns", "app", int32(70000), int32(1), true, strings.Repeat("K", 254)+"=v", uint32(0))
	f.Add("web", "ns", "app", int32(80), int32(1), true, "A=x\nB=y", uint32(1<<20))
	f.Add("wéb", "ns", "app\x00", int32(80), int32(1), true, "ÄÖ=ü\n\x00=\x00", uint32(0))
	f.Add("web", "ns", "app", int32(80), int32(1), true, "X=a\x00b\tc\x7f\nY=\u0085\u0080", uint32(0))
	f.Add("web", "ns", "app", int32(80), int32(1), true, "NEL=a\u0085b", uint32(0))
	f.Fuzz(func(t *testing.T, name, namespace, image string, port, replicas int32, hasReplicas bool, config string, pad uint32) {
		app := &webappv1.WebApp{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID("uid-1")},
			Spec:       webappv1.WebAppSpec{Image: image, Port: port},
		}
		if hasReplicas {
			app.Spec.Replicas = &replicas
		}
		if config != "" {
			app.Spec.Config = map[string]string{}
			for i, line := range strings.Split(config, "\n") {
				k, v, _ := strings.Cut(line, "=")
				if i == 0 {
					v += strings.Repeat("x", int(pad%(2<<20)))
				}
				app.Spec.Config[k] = v
			}
		}

		errs := validate(app)
		for _, e := range errs {
			if !namesWebAppField(e.Field, app) {
				t.Errorf("error names no field of the WebApp: %v", e)
			}
		}
		// The API server holds only WebApps with valid object names in
		// valid namespaces: only those must get children.
		if len(errs) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 || len(validation.IsDNS1123Label(namespace)) > 0 {
			return
		}
		checkChildren(t, app)
	})
}

// namesWebAppField reports whether path is a field validate may name.
func namesWebAppField(path string, app *webappv1.WebApp) bool {
	switch path {
	case "metadata.name", "spec.image", "spec.port", "spec.replicas", "spec.config":
		return true
	}
	for k := range app.Spec.Config {
		if path == field.NewPath("spec", "config").Key(k).String() {
			return true
		}
	}
	return false
}

// checkChildren fails t unless the children of app (valid per validate)
// pass the API server's checks of names, labels, keys, sizes and ports.
func checkChildren(t *testing.T, app *webappv1.WebApp) {
	t.Helper()
	scheme := fuzzScheme
	cm, err := configMap(app, scheme)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service(app, scheme)
	if err != nil {
		t.Fatal(err)
	}
	dep, err := deployment(app, nil, scheme)
	if err != nil {
		t.Fatal(err)
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(*cm.Name) {
		errs = append(errs, field.Invalid(field.NewPath("ConfigMap", "metadata", "name"), *cm.Name, msg))
	}
	errs = append(errs, metav1validation.ValidateLabels(cm.Labels, field.NewPath("ConfigMap", "metadata", "labels"))...)
	size := 0
	for k, v := range cm.Data {
		for _, msg := range validation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(field.NewPath("ConfigMap", "data").Key(k), k, msg))
		}
		size += len(v)
	}
	if size > corev1.MaxSecretSize {
		errs = append(errs, field.TooLong(field.NewPath("ConfigMap", "data"), "", corev1.MaxSecretSize))
	}

	for _, msg := range validation.IsDNS1035Label(*svc.Name) {
		errs = append(errs, field.Invalid(field.NewPath("Service", "metadata", "name"), *svc.Name, msg))
	}
	errs = append(errs, metav1validation.ValidateLabels(svc.Labels, field.NewPath("Service", "metadata", "labels"))...)
	errs = append(errs, metav1validation.ValidateLabels(svc.Spec.Selector, field.NewPath("Service", "spec", "selector"))...)
	for _, p := range svc.Spec.Ports {
		for _, msg := range validation.IsValidPortNum(int(*p.Port)) {
			errs = append(errs, field.Invalid(field.NewPath("Service", "spec", "ports"), *p.Port, msg))
		}
	}

	dpath := field.NewPath("Deployment")
	for _, msg := range validation.IsDNS1123Subdomain(*dep.Name) {
		errs = append(errs, field.Invalid(dpath.Child("metadata", "name"), *dep.Name, msg))
	}
	errs = append(errs, metav1validation.ValidateLabels(dep.Labels, dpath.Child("metadata", "labels"))...)
	errs = append(errs, metav1validation.ValidateLabels(dep.Spec.Selector.MatchLabels, dpath.Child("spec", "selector"))...)
	errs = append(errs, metav1validation.ValidateLabels(dep.Spec.Template.Labels, dpath.Child("spec", "template", "labels"))...)
	for k, v := range dep.Spec.Selector.MatchLabels {
		if dep.Spec.Template.Labels[k] != v {
			errs = append(errs, field.Invalid(dpath.Child("spec", "selector"), k, "does not match the template's labels"))
		}
	}
	if *dep.Spec.Replicas < 0 {
		errs = append(errs, field.Invalid(dpath.Child("spec", "replicas"), *dep.Spec.Replicas, "negative"))
	}
	for _, c := range dep.Spec.Template.Spec.Containers {
		if *c.Image == "" || strings.TrimSpace(*c.Image) != *c.Image {
			errs = append(errs, field.Invalid(dpath.Child("spec", "template", "spec", "containers", "image"), *c.Image, "empty or padded"))
		}
		for _, p := range c.Ports {
			for _, msg := range validation.IsValidPortNum(int(*p.ContainerPort)) {
				errs = append(errs, field.Invalid(dpath.Child("spec", "template", "spec", "containers", "ports"), *p.ContainerPort, msg))
			}
		}
	}

	// The API server reads apply requests as YAML. (A config padded to
	// near 1 MiB is left out: its padding is plain 'x's, and parsing it
	// would take most of the fuzzer's time.)
	children := map[string]any{"Service": svc, "Deployment": dep}
	if size <= 64<<10 {
		children["ConfigMap"] = cm
	}
	for kind, child := range children {
		body, err := json.Marshal(child)
		if err != nil {
			t.Fatal(err)
		}
		var fromYAML, fromJSON map[string]any
		if err := utilyaml.NewYAMLToJSONDecoder(bytes.NewReader(body)).Decode(&fromYAML); err != nil {
			errs = append(errs, field.Invalid(field.NewPath(kind), "<apply request>", err.Error()))
		} else if err := json.Unmarshal(body, &fromJSON); err != nil {
			t.Fatal(err)
		} else if diff := cmp.Diff(fromJSON, fromYAML); diff != "" {
			errs = append(errs, field.Invalid(field.NewPath(kind), "<apply request>", "read as YAML, it says something else (-sent +read):\n"+diff))
		}
	}
	for _, msg := range validation.IsConfigMapKey(RegistryKey(app)) {
		errs = append(errs, field.Invalid(field.NewPath("registry", "data").Key(RegistryKey(app)), RegistryKey(app), msg))
	}
	errs = append(errs, metav1validation.ValidateFieldManager(registryOwner(app), field.NewPath("registry", "fieldManager"))...)
	if len(errs) > 0 {
		t.Errorf("WebApp %s/%s passed validate, but its children would be refused:\n%v", app.Namespace, app.Name, errs.ToAggregate())
	}
}
