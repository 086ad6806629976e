package meta_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kopmeta "github.com/kopgo/kopgo/meta"
)

// existing is a ConfigMap as read from the server, with another
// controller's metadata on it.
func existing() *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: "cm", Namespace: "ns",
		Labels:      map[string]string{"keep": "1", "over": "old"},
		Annotations: map[string]string{"example.com/keep": "1"},
		// A bare finalizer: refused from a Builder, left alone on an object.
		Finalizers:      []string{"other.io/theirs", "legacy"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Secret", Name: "s", UID: "9"}},
	}}
}

func TestApplyTo(t *testing.T) {
	secretRef := metav1.OwnerReference{APIVersion: "v1", Kind: "Secret", Name: "s", UID: "9"}
	controllerRef := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "1",
		Controller: new(true), BlockOwnerDeletion: new(true)}
	tests := []struct {
		name string
		obj  func() *corev1.ConfigMap
		b    *kopmeta.Builder
		want metav1.ObjectMeta
	}{
		{"merges, dropping nothing", existing, kopmeta.New("cm").Namespace("ns").
			Labels(map[string]string{"over": "new"}).Labels(map[string]string{"add": "1"}).
			Annotations(map[string]string{"example.com/add": "1"}).
			Finalizer("example.com/ours").Finalizer("other.io/theirs").
			ControlledBy(deploy("ns", "d", "1"), scheme),
			metav1.ObjectMeta{
				Name: "cm", Namespace: "ns",
				Labels:          map[string]string{"keep": "1", "over": "new", "add": "1"},
				Annotations:     map[string]string{"example.com/keep": "1", "example.com/add": "1"},
				Finalizers:      []string{"other.io/theirs", "legacy", "example.com/ours"},
				OwnerReferences: []metav1.OwnerReference{secretRef, controllerRef},
			}},
		{"empty object gets everything", func() *corev1.ConfigMap { return &corev1.ConfigMap{} },
			kopmeta.New("cm").Namespace("ns").Labels(map[string]string{"a": "1"}).Annotations(map[string]string{"example.com/a": "1"}).Finalizer("example.com/f").
				ControlledBy(deploy("ns", "d", "1"), scheme),
			metav1.ObjectMeta{
				Name: "cm", Namespace: "ns",
				Labels: map[string]string{"a": "1"}, Annotations: map[string]string{"example.com/a": "1"},
				Finalizers: []string{"example.com/f"}, OwnerReferences: []metav1.OwnerReference{controllerRef},
			}},
		{"a Builder without a name keeps the object's", existing, (&kopmeta.Builder{}).Labels(map[string]string{"add": "1"}),
			func() metav1.ObjectMeta {
				om := existing().ObjectMeta
				om.Labels["add"] = "1"
				return om
			}()},
		{"nothing to merge leaves fields as they were", func() *corev1.ConfigMap {
			return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}
		}, kopmeta.New("cm"), metav1.ObjectMeta{Name: "cm"}},
		{"the object's namespace counts for owners", existing, kopmeta.New("cm").ControlledBy(deploy("ns", "d", "1"), scheme),
			func() metav1.ObjectMeta {
				om := existing().ObjectMeta
				om.OwnerReferences = append(om.OwnerReferences, controllerRef)
				return om
			}()},
		{"the same owner is updated in place, not demoted", func() *corev1.ConfigMap {
			cm := existing()
			cm.OwnerReferences = append(cm.OwnerReferences, metav1.OwnerReference{APIVersion: "apps/v1beta1", Kind: "Deployment", Name: "d", UID: "1",
				Controller: new(true), BlockOwnerDeletion: new(true)})
			return cm
		}, kopmeta.New("cm").Owner(deploy("ns", "d", "1"), scheme),
			func() metav1.ObjectMeta {
				om := existing().ObjectMeta
				om.OwnerReferences = append(om.OwnerReferences, controllerRef)
				return om
			}()},
		{"the existing controller set again", func() *corev1.ConfigMap {
			cm := existing()
			cm.OwnerReferences = append(cm.OwnerReferences, controllerRef)
			return cm
		}, kopmeta.New("cm").ControlledBy(deploy("ns", "d", "1"), scheme),
			func() metav1.ObjectMeta {
				om := existing().ObjectMeta
				om.OwnerReferences = append(om.OwnerReferences, controllerRef)
				return om
			}()},
		{"generateName", func() *corev1.ConfigMap { return &corev1.ConfigMap{} }, kopmeta.GenerateName("cm-"),
			metav1.ObjectMeta{GenerateName: "cm-"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := tt.obj()
			if err := tt.b.ApplyTo(obj); err != nil {
				t.Fatalf("ApplyTo() error: %v", err)
			}
			if diff := cmp.Diff(tt.want, obj.ObjectMeta); diff != "" {
				t.Errorf("metadata after ApplyTo (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyToErrors(t *testing.T) {
	tests := []struct {
		name    string
		obj     func() *corev1.ConfigMap
		b       *kopmeta.Builder
		want    []problem
		message string // a part of the error message
	}{
		{"other name", existing, kopmeta.New("other"),
			[]problem{invalid("metadata.name", "other")},
			`metadata.name: Invalid value: "other": the object is already named "cm"`},
		{"other namespace", existing, kopmeta.New("cm").Namespace("elsewhere"),
			[]problem{invalid("metadata.namespace", "elsewhere")},
			`metadata.namespace: Invalid value: "elsewhere": the object is already in namespace "ns"`},
		{"second controller", func() *corev1.ConfigMap {
			cm := existing()
			cm.OwnerReferences[0].Controller = new(true)
			return cm
		}, kopmeta.New("cm").ControlledBy(deploy("ns", "d", "1"), scheme),
			[]problem{invalid("metadata.ownerReferences[1].controller", true)},
			`already controlled by Secret s (uid 9): Deployment d cannot be a second controller`},
		{"an object cannot own itself", func() *corev1.ConfigMap {
			cm := existing()
			cm.UID = "self"
			return cm
		}, kopmeta.New("cm").Owner(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm", UID: "self"}}, scheme),
			[]problem{invalid("metadata.ownerReferences[1].uid", types.UID("self"))},
			`metadata.ownerReferences[1].uid: Invalid value: "self": ConfigMap ns/cm cannot own itself`},
		{"owner in another namespace than the object", existing, kopmeta.New("cm").Owner(deploy("other", "d", "1"), scheme),
			[]problem{invalid("metadata.ownerReferences[1]", "other")},
			`owner Deployment other/d is in namespace "other", not "ns"`},
		{"paths index the merged lists", existing, kopmeta.New("cm").Finalizer("other.io/theirs").Finalizer("bare").
			Owner(deploy("ns", "d", ""), scheme),
			[]problem{invalid("metadata.finalizers[2]", "bare"), required("metadata.ownerReferences[1].uid")},
			`metadata.finalizers[2]: Invalid value: "bare"`},
		{"annotation size counts what the object has", func() *corev1.ConfigMap {
			cm := existing()
			cm.Annotations["example.com/big"] = strings.Repeat("x", 256*1024-100)
			return cm
		}, kopmeta.New("cm").Annotations(map[string]string{"example.com/more": strings.Repeat("x", 100)}),
			[]problem{{field.ErrorTypeTooLong, "metadata.annotations", 256*1024 + len("example.com/keep1example.com/bigexample.com/more")}},
			`metadata.annotations: Too long`},
		{"all at once", func() *corev1.ConfigMap {
			cm := existing()
			cm.OwnerReferences[0].Controller = new(true)
			return cm
		}, kopmeta.New("other").Namespace("elsewhere").Labels(map[string]string{"k": "-"}).ControlledBy(deploy("elsewhere", "d", "1"), scheme),
			[]problem{
				invalid("metadata.name", "other"), invalid("metadata.namespace", "elsewhere"),
				invalid(`metadata.labels["k"]`, "-"), invalid("metadata.ownerReferences[1].controller", true),
			},
			`the object is already named "cm"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := tt.obj()
			err := tt.b.ApplyTo(obj)
			if diff := cmp.Diff(tt.want, problemsOf(t, err)); diff != "" {
				t.Errorf("ApplyTo() problems (-want +got):\n%s\nerror: %v", diff, err)
			}
			if err != nil && !strings.Contains(err.Error(), tt.message) {
				t.Errorf("ApplyTo() = %q, want it to contain %q", err, tt.message)
			}
			if diff := cmp.Diff(tt.obj(), obj); diff != "" {
				t.Errorf("a failed ApplyTo changed the object (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyToNilObject(t *testing.T) {
	tests := []struct {
		name string
		obj  client.Object
	}{
		{"nil interface", nil},
		{"nil pointer", (*appsv1.Deployment)(nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := kopmeta.New("web").ApplyTo(tt.obj)
			if err == nil || err.Error() != "apply metadata to a nil object" {
				t.Errorf("ApplyTo() = %v, want \"apply metadata to a nil object\"", err)
			}
		})
	}
}

// TestApplyToWritesFreshMaps checks that ApplyTo does not write through to
// maps and slices the object shares with something else (as a shallow copy
// of a cached object does).
func TestApplyToWritesFreshMaps(t *testing.T) {
	cached := existing()
	obj := cached.DeepCopy()
	obj.Labels, obj.Annotations = cached.Labels, cached.Annotations
	obj.Finalizers, obj.OwnerReferences = cached.Finalizers, cached.OwnerReferences

	err := kopmeta.New("cm").Labels(map[string]string{"over": "new"}).Annotations(map[string]string{"example.com/keep": "2"}).
		Finalizer("example.com/ours").Owner(deploy("ns", "s", "9"), scheme).ApplyTo(obj)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(existing(), cached); diff != "" {
		t.Errorf("ApplyTo wrote through to shared maps or slices (-want +got):\n%s", diff)
	}
}
