package controller

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	kubebuilderv1 "github.com/kopgo/kopgo/examples/kubebuilder/api/v1"
	"github.com/kopgo/kopgo/owners"
)

// fuzzScheme is built once: a scheme per input would take most of the
// fuzzer's time.
var fuzzScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(kubebuilderv1.AddToScheme(s))
	return s
}()

// FuzzValidate feeds validate ConfigSets of any name, namespace, entry
// names and data. It never panics, every error names a field of the
// ConfigSet, and a ConfigSet it accepts yields ConfigMaps (configMaps) that
// the API server accepts: valid names, labels, keys and sizes, and apply
// requests that its YAML decoder reads as they were sent.
//
// entries is a list of entry names, one a line; data is a list of
// "key=value" lines, dealt to the entries in turn; pad adds that many bytes
// (modulo 2 MiB) to the first value, so that the 1 MiB limit is within
// reach.
//
//	go test ./examples/kubebuilder/internal/controller -run '^$' -fuzz FuzzValidate -fuzztime 60s
func FuzzValidate(f *testing.F) {
	f.Add("app", "default", "web\ndb", "mode=fast\npool=10\nlog.level=debug", uint32(0))
	f.Add("a.b", "ns", "web", "", uint32(0))
	f.Add(strings.Repeat("a", 63), strings.Repeat("n", 63), strings.Repeat("e", 63), "1x=v\na_b-c.d=x=y", uint32(0))
	f.Add(strings.Repeat("a", 64), "ns", "web", "k=v", uint32(0))
	f.Add(strings.Repeat("a", 253), "ns", "web", "k=v", uint32(0))
	f.Add("app", "ns", "Web\nweb\nweb\n\na.b", "k=v", uint32(0))
	f.Add("app", "ns", "web", "a=b=c\n.=dot\n..x=v\n=empty\na b=v\nключ=v", uint32(0))
	f.Add("app", "ns", "web", strings.Repeat("K", 254)+"=v\n"+strings.Repeat("K", 253)+"=v", uint32(0))
	f.Add("app", "ns", "web", "a=x\nb=y", uint32(1<<20))
	f.Add("app", "ns", "web", "a=x\nb=y", uint32(1<<20-2))
	f.Add("app", "ns", "web", "x=a\x00b\tc\r\x1b\ufeff\u2028\nmsg=héllo 🌍", uint32(0))
	f.Add("app", "ns", "web", "nel=a\u0085b", uint32(0))
	f.Add("app", "ns", "web", "del=a\x7f\nc1=\u009b\nnc=\ufffe\uffff", uint32(0))
	f.Add("app", "ns", "web", "k\x7f=v\nk\u0085=v\n\xff=\xfe", uint32(0))
	f.Fuzz(func(t *testing.T, name, namespace, entries, data string, pad uint32) {
		cs := &kubebuilderv1.ConfigSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID("uid-1")}}
		if entries != "" {
			for e := range strings.SplitSeq(entries, "\n") {
				cs.Spec.Configs = append(cs.Spec.Configs, kubebuilderv1.ConfigEntry{Name: e})
			}
		}
		if data != "" && len(cs.Spec.Configs) > 0 {
			for i, line := range strings.Split(data, "\n") {
				k, v, _ := strings.Cut(line, "=")
				if i == 0 {
					v += strings.Repeat("x", int(pad%(2<<20)))
				}
				e := &cs.Spec.Configs[i%len(cs.Spec.Configs)]
				if e.Data == nil {
					e.Data = map[string]string{}
				}
				e.Data[k] = v
			}
		}

		errs := validate(cs)
		for _, e := range errs {
			if !namesConfigSetField(e.Field, cs) {
				t.Errorf("error names no field of the ConfigSet: %v", e)
			}
		}
		// The API server holds only ConfigSets with valid object names in
		// valid namespaces: only those get ConfigMaps.
		if len(errs) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 || len(validation.IsDNS1123Label(namespace)) > 0 {
			return
		}
		checkConfigMaps(t, cs)
	})
}

// namesConfigSetField reports whether path is a field validate may name.
func namesConfigSetField(path string, cs *kubebuilderv1.ConfigSet) bool {
	if path == "metadata.name" {
		return true
	}
	configs := field.NewPath("spec", "configs")
	for i, e := range cs.Spec.Configs {
		data := configs.Index(i).Child("data")
		if path == configs.Index(i).Child("name").String() || path == data.String() {
			return true
		}
		for k := range e.Data {
			if path == data.Key(k).String() {
				return true
			}
		}
	}
	return false
}

// checkConfigMaps fails t unless the ConfigMaps of cs (valid per validate)
// pass the API server's checks of names, labels, keys and sizes, and their
// apply requests read as YAML say what they say as JSON.
func checkConfigMaps(t *testing.T, cs *kubebuilderv1.ConfigSet) {
	t.Helper()
	label, err := owners.OwnerLabel(ConfigSetLabel, cs)
	if err != nil {
		t.Fatalf("validate accepted ConfigSet %s/%s, but it cannot label its ConfigMaps: %v", cs.Namespace, cs.Name, err)
	}
	cms, err := configMaps(cs, label, fuzzScheme)
	if err != nil {
		t.Fatal(err)
	}
	if len(cms) != len(cs.Spec.Configs) {
		t.Fatalf("%d ConfigMaps for %d entries", len(cms), len(cs.Spec.Configs))
	}
	var errs field.ErrorList
	names := map[string]bool{}
	for _, cm := range cms {
		path := field.NewPath("ConfigMap " + *cm.Name)
		for _, msg := range validation.IsDNS1123Subdomain(*cm.Name) {
			errs = append(errs, field.Invalid(path.Child("metadata", "name"), *cm.Name, msg))
		}
		if names[*cm.Name] {
			errs = append(errs, field.Duplicate(path.Child("metadata", "name"), *cm.Name))
		}
		names[*cm.Name] = true
		errs = append(errs, metav1validation.ValidateLabels(cm.Labels, path.Child("metadata", "labels"))...)
		size := 0
		for k, v := range cm.Data {
			for _, msg := range validation.IsConfigMapKey(k) {
				errs = append(errs, field.Invalid(path.Child("data").Key(k), k, msg))
			}
			size += len(v)
		}
		if size > corev1.MaxSecretSize {
			errs = append(errs, field.TooLong(path.Child("data"), "", corev1.MaxSecretSize))
		}
		// The API server reads apply requests as YAML. (Data padded to
		// near 1 MiB is left out: its padding is plain 'x's, and parsing
		// it would take most of the fuzzer's time.)
		if size > 64<<10 {
			continue
		}
		body, err := json.Marshal(cm)
		if err != nil {
			t.Fatal(err)
		}
		var fromYAML, fromJSON map[string]any
		if err := utilyaml.NewYAMLToJSONDecoder(bytes.NewReader(body)).Decode(&fromYAML); err != nil {
			errs = append(errs, field.Invalid(path, "<apply request>", err.Error()))
		} else if err := json.Unmarshal(body, &fromJSON); err != nil {
			t.Fatal(err)
		} else if diff := cmp.Diff(fromJSON, fromYAML); diff != "" {
			errs = append(errs, field.Invalid(path, "<apply request>", "read as YAML, it says something else (-sent +read):\n"+diff))
		}
	}
	if len(errs) > 0 {
		t.Errorf("ConfigSet %s/%s passed validate, but its ConfigMaps would be refused:\n%v", cs.Namespace, cs.Name, errs.ToAggregate())
	}
}
