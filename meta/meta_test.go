package meta_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

var deployGVK = appsv1.SchemeGroupVersion.WithKind("Deployment")

func owner(name string, uid types.UID) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: uid}}
}

// fieldErr is one expected problem: its path and offending value.
type fieldErr struct {
	Field string
	Value string
}

func problems(t *testing.T, err error) []fieldErr {
	t.Helper()
	if err == nil {
		return nil
	}
	ve, ok := koperrors.AsType[*kopmeta.ValidationError](err)
	if !ok {
		t.Fatalf("error %v is not a *ValidationError", err)
	}
	var out []fieldErr
	for _, f := range ve.Fields {
		v := ""
		switch bv := f.BadValue.(type) {
		case string:
			v = bv
		case nil:
		default:
			b, _ := json.Marshal(bv)
			v = string(b)
		}
		out = append(out, fieldErr{f.Field, v})
	}
	return out
}

func TestBuildValidation(t *testing.T) {
	long := strings.Repeat("a", 64)
	tests := []struct {
		name string
		b    *kopmeta.Builder
		want []fieldErr
	}{
		{"valid", kopmeta.New("web").Namespace("shop").Label("app.kubernetes.io/name", "web").
			Annotation("example.com/note", "anything: goes").Finalizer("example.com/cleanup").
			ControlledBy(owner("d", "1"), deployGVK), nil},
		{"generateName", kopmeta.GenerateName("web-"), nil},
		{"no name", kopmeta.New(""), []fieldErr{{"metadata.name", ""}}},
		{"upper-case name", kopmeta.New("Web"), []fieldErr{{"metadata.name", "Web"}}},
		{"dotted name under label rule", kopmeta.New("a.b").NameRule(kopmeta.DNS1123Label), []fieldErr{{"metadata.name", "a.b"}}},
		{"long label name", kopmeta.New(long).NameRule(kopmeta.DNS1123Label), []fieldErr{{"metadata.name", long}}},
		{"bad generateName", kopmeta.GenerateName("Web-"), []fieldErr{{"metadata.generateName", "Web-xxxxx"}}},
		{"bad namespace", kopmeta.New("web").Namespace("my.ns"), []fieldErr{{"metadata.namespace", "my.ns"}}},
		{"bad label key", kopmeta.New("web").Label("bad key", "v"), []fieldErr{{"metadata.labels", "bad key"}}},
		{"bad label value", kopmeta.New("web").Label("k", "-v"), []fieldErr{{"metadata.labels", "-v"}}},
		{"bad annotation key", kopmeta.New("web").Annotation("a/b/c", "v"), []fieldErr{{"metadata.annotations", "a/b/c"}}},
		{"annotations too large", kopmeta.New("web").Annotation("big", strings.Repeat("x", 256*1024)), []fieldErr{{"metadata.annotations", "<value omitted>"}}},
		{"bare finalizer", kopmeta.New("web").Finalizer("cleanup"), []fieldErr{{"metadata.finalizers[0]", "cleanup"}}},
		{"owner without uid", kopmeta.New("web").Owner(owner("d", ""), deployGVK), []fieldErr{{"metadata.ownerReferences[0].uid", ""}}},
		{"owner without kind", kopmeta.New("web").Owner(owner("d", "1"), schema.GroupVersionKind{}), []fieldErr{
			{"metadata.ownerReferences[0].apiVersion", ""}, {"metadata.ownerReferences[0].kind", ""}}},
		{"two controllers", kopmeta.New("web").ControlledBy(owner("a", "1"), deployGVK).ControlledBy(owner("b", "2"), deployGVK),
			[]fieldErr{{"metadata.ownerReferences[1].controller", "true"}}},
		{"all at once", kopmeta.New("Web").Label("k", "-v").Finalizer("x"), []fieldErr{
			{"metadata.finalizers[0]", "x"}, {"metadata.labels", "-v"}, {"metadata.name", "Web"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.b.Build()
			if diff := cmp.Diff(tt.want, problems(t, err)); diff != "" {
				t.Errorf("Build() problems (-want +got):\n%s\nerror: %v", diff, err)
			}
			// The apply form and ApplyTo validate the same way.
			_, acErr := tt.b.ApplyConfiguration()
			if (acErr == nil) != (err == nil) {
				t.Errorf("ApplyConfiguration() = %v, Build() = %v", acErr, err)
			}
			if applyErr := tt.b.ApplyTo(&corev1.ConfigMap{}); (applyErr == nil) != (err == nil) {
				t.Errorf("ApplyTo() = %v, Build() = %v", applyErr, err)
			}
		})
	}
}

func TestSecondControllerNamesBoth(t *testing.T) {
	_, err := kopmeta.New("web").ControlledBy(owner("first", "1"), deployGVK).ControlledBy(owner("second", "2"), deployGVK).Build()
	if err == nil || !strings.Contains(err.Error(), `Deployment "first" is already the controller; Deployment "second" cannot be a second one`) {
		t.Errorf("Build() = %v", err)
	}
}

func TestOwnerGVKFromTypeMeta(t *testing.T) {
	o := owner("d", "1")
	o.SetGroupVersionKind(deployGVK)
	om, err := kopmeta.New("web").Owner(o, schema.GroupVersionKind{}).Build()
	if err != nil {
		t.Fatal(err)
	}
	want := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "1"}}
	if diff := cmp.Diff(want, om.OwnerReferences); diff != "" {
		t.Errorf("owner references (-want +got):\n%s", diff)
	}
}

func TestResultsDoNotAlias(t *testing.T) {
	b := kopmeta.New("web").Label("a", "1").Annotation("example.com/x", "1").Finalizer("example.com/f").
		ControlledBy(owner("d", "1"), deployGVK)
	first, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	first.Labels["a"] = "changed"
	first.Annotations["example.com/x"] = "changed"
	first.Finalizers[0] = "changed"
	first.OwnerReferences[0].Name = "changed"
	*first.OwnerReferences[0].Controller = false
	second, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if second.Labels["a"] != "1" || second.Annotations["example.com/x"] != "1" || second.Finalizers[0] != "example.com/f" ||
		second.OwnerReferences[0].Name != "d" || !*second.OwnerReferences[0].Controller {
		t.Errorf("second Build shares state with the first: %+v", second)
	}
	clone := b.Clone().Label("b", "2")
	if om, _ := b.Build(); om.Labels["b"] != "" {
		t.Errorf("Clone shares labels with its original: %v", om.Labels)
	}
	if om, _ := clone.Build(); om.Labels["a"] != "1" || om.Labels["b"] != "2" {
		t.Errorf("clone labels = %v", om.Labels)
	}
}

func TestApplyConfigurationMatchesBuild(t *testing.T) {
	b := kopmeta.New("web").Namespace("shop").Label("a", "1").Annotation("example.com/x", "y").
		Finalizer("example.com/f").Owner(owner("o", "1"), deployGVK).ControlledBy(owner("c", "2"), deployGVK)
	om, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	ac, err := b.ApplyConfiguration()
	if err != nil {
		t.Fatal(err)
	}
	typed, _ := json.Marshal(om)
	applyForm, _ := json.Marshal(ac)
	var a, c map[string]any
	_ = json.Unmarshal(typed, &a)
	_ = json.Unmarshal(applyForm, &c)
	delete(a, "creationTimestamp") // typed ObjectMeta always marshals it as null
	if diff := cmp.Diff(a, c); diff != "" {
		t.Errorf("apply configuration differs from ObjectMeta (-typed +apply):\n%s", diff)
	}
}

func TestApplyTo(t *testing.T) {
	existing := func() *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: "cm", Namespace: "ns",
			Labels:          map[string]string{"keep": "1", "over": "old"},
			Annotations:     map[string]string{"example.com/keep": "1"},
			Finalizers:      []string{"other.io/theirs"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Secret", Name: "s", UID: "9"}},
		}}
	}
	t.Run("merges", func(t *testing.T) {
		cm := existing()
		err := kopmeta.New("cm").Namespace("ns").Label("over", "new").Label("add", "1").
			Annotation("example.com/add", "1").Finalizer("example.com/ours").Finalizer("other.io/theirs").
			ControlledBy(owner("d", "1"), deployGVK).ApplyTo(cm)
		if err != nil {
			t.Fatal(err)
		}
		want := metav1.ObjectMeta{
			Name: "cm", Namespace: "ns",
			Labels:      map[string]string{"keep": "1", "over": "new", "add": "1"},
			Annotations: map[string]string{"example.com/keep": "1", "example.com/add": "1"},
			Finalizers:  []string{"other.io/theirs", "example.com/ours"},
			OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "v1", Kind: "Secret", Name: "s", UID: "9"},
				{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "1", Controller: new(true), BlockOwnerDeletion: new(true)},
			},
		}
		if diff := cmp.Diff(want, cm.ObjectMeta); diff != "" {
			t.Errorf("metadata after ApplyTo (-want +got):\n%s", diff)
		}
	})
	for _, tt := range []struct {
		name string
		b    *kopmeta.Builder
		want string
	}{
		{"other name", kopmeta.New("other"), `object is already named "cm", builder says "other"`},
		{"other namespace", kopmeta.New("cm").Namespace("elsewhere"), `object is already in "ns", builder says "elsewhere"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cm := existing()
			err := tt.b.Label("new", "1").ApplyTo(cm)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ApplyTo() = %v, want %q", err, tt.want)
			}
			if diff := cmp.Diff(existing(), cm); diff != "" {
				t.Errorf("a failed ApplyTo changed the object (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("second controller", func(t *testing.T) {
		cm := existing()
		cm.OwnerReferences[0].Controller = new(true)
		err := kopmeta.New("cm").ControlledBy(owner("d", "1"), deployGVK).ApplyTo(cm)
		if err == nil || !strings.Contains(err.Error(), `Secret "s" is already the controller`) {
			t.Fatalf("ApplyTo() = %v", err)
		}
		if len(cm.OwnerReferences) != 1 {
			t.Errorf("owner references changed on error: %v", cm.OwnerReferences)
		}
	})
}
