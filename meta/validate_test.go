package meta_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kopmeta "github.com/kopgo/kopgo/meta"
)

// rbacName is the RBAC kinds' name rule, as the Builder's documentation
// shows it.
func rbacName(name string, _ bool) []string { return content.IsPathSegmentName(name) }

// notRegistered is a type the scheme does not know.
type notRegistered struct{ corev1.ConfigMap }

func TestValidation(t *testing.T) {
	const sizeLimit = 256 * 1024
	long := strings.Repeat("a", 64)
	tests := []struct {
		name string
		b    *kopmeta.Builder
		want []problem
	}{
		// Valid.
		{"everything", kopmeta.New("web").Namespace("shop").
			Labels(map[string]string{"app.kubernetes.io/name": "web"}).Labels(map[string]string{"empty-value": ""}).
			Annotations(map[string]string{"example.com/note": "anything: goes"}).Annotations(map[string]string{"Example.com/Upper": "case ignored"}).
			Finalizer("example.com/cleanup").Finalizer(metav1.FinalizerOrphanDependents).
			Owner(deploy("", "cluster-scoped", "1"), scheme).
			ControlledBy(deploy("shop", "d", "2"), scheme), nil},
		{"generateName", kopmeta.GenerateName("web-"), nil},
		{"label rule", kopmeta.New("web").NameRule(apivalidation.NameIsDNSLabel), nil},
		{"DNS-1035 rule", kopmeta.New("web").NameRule(apivalidation.NameIsDNS1035Label), nil},
		{"path segment rule", kopmeta.New("example.com:Manager").NameRule(rbacName), nil},
		{"long generateName is truncated by the server", kopmeta.GenerateName(long + "-"), nil},
		{"annotations at the size limit", kopmeta.New("web").Annotations(map[string]string{"k": strings.Repeat("x", sizeLimit-1)}), nil},

		// Names.
		{"no name", kopmeta.New(""), []problem{required("metadata.name")}},
		{"zero Builder", &kopmeta.Builder{}, []problem{required("metadata.name")}},
		{"upper-case name", kopmeta.New("Web"), []problem{invalid("metadata.name", "Web")}},
		{"dot under label rule", kopmeta.New("a.b").NameRule(apivalidation.NameIsDNSLabel), []problem{invalid("metadata.name", "a.b")}},
		{"too long for a label", kopmeta.New(long).NameRule(apivalidation.NameIsDNSLabel), []problem{invalid("metadata.name", long)}},
		{"digit first under DNS-1035", kopmeta.New("1web").NameRule(apivalidation.NameIsDNS1035Label), []problem{invalid("metadata.name", "1web")}},
		{"slash in a path segment", kopmeta.New("a/b").NameRule(rbacName), []problem{invalid("metadata.name", "a/b")}},
		{"bad generateName", kopmeta.GenerateName("Web-"), []problem{invalid("metadata.generateName", "Web-")}},
		{"generateName under label rule", kopmeta.GenerateName("web.").NameRule(apivalidation.NameIsDNSLabel),
			[]problem{invalid("metadata.generateName", "web.")}},
		{"generateName prefix too long for a label", kopmeta.GenerateName(long + "-").NameRule(apivalidation.NameIsDNSLabel),
			[]problem{invalid("metadata.generateName", long+"-")}},
		{"bad namespace", kopmeta.New("web").Namespace("my.ns"), []problem{invalid("metadata.namespace", "my.ns")}},

		// Labels and annotations.
		{"bad label key", kopmeta.New("web").Labels(map[string]string{"bad key": "v"}), []problem{invalid(`metadata.labels["bad key"]`, "bad key")}},
		{"bad label value", kopmeta.New("web").Labels(map[string]string{"app.kubernetes.io/name": "-web"}),
			[]problem{invalid(`metadata.labels["app.kubernetes.io/name"]`, "-web")}},
		{"long label value", kopmeta.New("web").Labels(map[string]string{"k": long}), []problem{invalid(`metadata.labels["k"]`, long)}},
		{"labels in key order", kopmeta.New("web").Labels(map[string]string{"z": "-"}).Labels(map[string]string{"a": "-"}),
			[]problem{invalid(`metadata.labels["a"]`, "-"), invalid(`metadata.labels["z"]`, "-")}},
		{"bad annotation key", kopmeta.New("web").Annotations(map[string]string{"a/b/c": "v"}),
			[]problem{invalid(`metadata.annotations["a/b/c"]`, "a/b/c")}},
		{"annotations too large", kopmeta.New("web").Annotations(map[string]string{"k": strings.Repeat("x", sizeLimit)}),
			[]problem{{field.ErrorTypeTooLong, "metadata.annotations", sizeLimit + 1}}},

		// Finalizers.
		{"bare finalizer", kopmeta.New("web").Finalizer("cleanup"), []problem{invalid("metadata.finalizers[0]", "cleanup")}},
		{"domain without path", kopmeta.New("web").Finalizer("example.com"), []problem{invalid("metadata.finalizers[0]", "example.com")}},
		{"bad finalizer name", kopmeta.New("web").Finalizer("example.com/ok").Finalizer("example.com/not ok"),
			[]problem{invalid("metadata.finalizers[1]", "example.com/not ok")}},
		{"orphan and foreground", kopmeta.New("web").Finalizer("orphan").Finalizer("foregroundDeletion"),
			[]problem{invalid("metadata.finalizers", []string{"orphan", "foregroundDeletion"})}},

		// Owner references.
		{"owner without uid", kopmeta.New("web").Owner(deploy("", "d", ""), scheme),
			[]problem{required("metadata.ownerReferences[0].uid")}},
		{"owner of unknown kind", kopmeta.New("web").Owner(deploy("", "d", "1"), nil),
			[]problem{required("metadata.ownerReferences[0].kind")}},
		{"nil owner", kopmeta.New("web").ControlledBy(nil, scheme), []problem{required("metadata.ownerReferences[0]")}},
		{"typed nil owner", kopmeta.New("web").Owner((*appsv1.Deployment)(nil), scheme),
			[]problem{required("metadata.ownerReferences[0]")}},
		{"owner of a kind the scheme does not know", kopmeta.New("web").Owner(&notRegistered{ConfigMap: corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", UID: "1"}}}, scheme),
			[]problem{required("metadata.ownerReferences[0].kind")}},
		{"owner without name and uid", kopmeta.New("web").Owner(deploy("", "", ""), scheme), []problem{
			required("metadata.ownerReferences[0].name"), required("metadata.ownerReferences[0].uid")}},
		{"event owner", kopmeta.New("web").Owner(&corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e", UID: "1"}}, scheme),
			[]problem{invalid("metadata.ownerReferences[0].kind", "Event")}},
		{"owner in another namespace", kopmeta.New("web").Namespace("shop").Owner(deploy("other", "d", "1"), scheme),
			[]problem{invalid("metadata.ownerReferences[0]", "other")}},
		{"namespaced owner, no namespace", kopmeta.New("web").ControlledBy(deploy("shop", "d", "1"), scheme),
			[]problem{invalid("metadata.ownerReferences[0]", "shop")}},
		{"two controllers", kopmeta.New("web").ControlledBy(deploy("", "a", "1"), scheme).ControlledBy(deploy("", "b", "2"), scheme),
			[]problem{invalid("metadata.ownerReferences[1].controller", true)}},

		// Everything is reported at once, in field order.
		{"all at once", kopmeta.New("Web").Namespace("my.ns").Labels(map[string]string{"k": "-v"}).Annotations(map[string]string{"a/b/c": ""}).Finalizer("x").
			Owner(deploy("", "d", ""), scheme), []problem{
			invalid("metadata.name", "Web"), invalid("metadata.namespace", "my.ns"),
			invalid(`metadata.labels["k"]`, "-v"), invalid(`metadata.annotations["a/b/c"]`, "a/b/c"),
			invalid("metadata.finalizers[0]", "x"), required("metadata.ownerReferences[0].uid")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.b.Build()
			if diff := cmp.Diff(tt.want, problemsOf(t, err)); diff != "" {
				t.Errorf("Build() problems (-want +got):\n%s\nerror: %v", diff, err)
			}
			for _, p := range tt.want {
				if !strings.Contains(err.Error(), p.Field+": ") {
					t.Errorf("error message does not name %s: %v", p.Field, err)
				}
			}
			// The other terminal methods check the same things (a fresh
			// object has nothing ApplyTo would merge with).
			_, acErr := tt.b.ApplyConfiguration()
			if diff := cmp.Diff(tt.want, problemsOf(t, acErr)); diff != "" {
				t.Errorf("ApplyConfiguration() problems (-want +got):\n%s", diff)
			}
			applyErr := tt.b.ApplyTo(&corev1.ConfigMap{})
			if diff := cmp.Diff(tt.want, problemsOf(t, applyErr)); diff != "" {
				t.Errorf("ApplyTo() problems (-want +got):\n%s", diff)
			}
		})
	}
}

// TestValidationMessages pins the messages a user reads for the problems
// whose wording is this package's own.
func TestValidationMessages(t *testing.T) {
	tests := []struct {
		name string
		b    *kopmeta.Builder
		want string
	}{
		{"bare finalizer", kopmeta.New("web").Finalizer("cleanup"),
			`invalid metadata: metadata.finalizers[0]: Invalid value: "cleanup": must be domain-qualified, like "example.com/cleanup", so that no other controller's finalizer has the same name`},
		{"second controller names both owners", kopmeta.New("web").ControlledBy(deploy("", "first", "1"), scheme).ControlledBy(deploy("", "second", "2"), scheme),
			`invalid metadata: metadata.ownerReferences[1].controller: Invalid value: true: already controlled by Deployment first (uid 1): Deployment second cannot be a second controller`},
		{"unknown kind", kopmeta.New("web").ControlledBy(deploy("", "d", "1"), nil),
			`invalid metadata: metadata.ownerReferences[0].kind: Required value: owner "d" passed to ControlledBy: its kind is unknown: pass a scheme that knows its type (a typed object read through a client has an empty TypeMeta)`},
		{"cross namespace", kopmeta.New("web").Namespace("a").Owner(deploy("b", "d", "1"), scheme),
			`invalid metadata: metadata.ownerReferences[0]: Invalid value: "b": owner Deployment b/d is in namespace "b", not "a": owner references do not cross namespaces (the garbage collector would find no owner and delete the object)`},
		{"annotation size", kopmeta.New("web").Annotations(map[string]string{"k": strings.Repeat("x", 256*1024)}),
			`invalid metadata: metadata.annotations: Too long: keys and values total 262145 bytes, more than the limit of 262144`},
		{"two problems", kopmeta.New("").Owner(deploy("", "d", ""), scheme),
			`invalid metadata: metadata.name: Required value: name or generateName is required; metadata.ownerReferences[0].uid: Required value: owner Deployment d has no UID: create it (or read it from the API server) before it can own anything`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.b.Build()
			if err == nil {
				t.Fatal("Build() succeeded, want an error")
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}
}
