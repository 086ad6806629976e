package meta_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kopmeta "github.com/kopgo/kopgo/meta"
)

// TestParityWithServerValidation runs the API server's own checks of new
// metadata (apimachinery's ValidateObjectMetaAccessor, which kube-apiserver
// runs on create, with the name function of each kind) on the same input as
// the Builder, and compares which fields each refuses. The Builder must
// refuse exactly what the server refuses, plus the fields where it is
// stricter on purpose (see the package documentation, section Validation).
func TestParityWithServerValidation(t *testing.T) {
	const limit = apivalidation.TotalAnnotationSizeLimitB
	a := func(n int) string { return strings.Repeat("a", n) }
	ctrl := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "1",
		Controller: new(true), BlockOwnerDeletion: new(true)}
	plain := metav1.OwnerReference{APIVersion: "v1", Kind: "Secret", Name: "s", UID: "2"}
	tests := []struct {
		name string
		rule string // a key of nameRules; "" for the default
		om   metav1.ObjectMeta
		// stricter names the fields the Builder refuses on purpose although
		// the server accepts them.
		stricter []string
	}{
		// Both accept.
		{name: "name", om: metav1.ObjectMeta{Name: "web"}},
		{name: "generateName", om: metav1.ObjectMeta{GenerateName: "web-"}},
		{name: "long generateName, truncated by the server", om: metav1.ObjectMeta{GenerateName: a(70) + "-"}},
		{name: "longest subdomain", om: metav1.ObjectMeta{Name: a(253)}},
		{name: "label rule", rule: "label", om: metav1.ObjectMeta{Name: a(63)}},
		{name: "DNS-1035 rule", rule: "dns1035", om: metav1.ObjectMeta{Name: "web-1"}},
		{name: "path segment rule", rule: "rbac", om: metav1.ObjectMeta{Name: "system:kopgo:Manager"}},
		{name: "everything", om: metav1.ObjectMeta{
			Name: "web", Namespace: "shop",
			Labels:          map[string]string{"app.kubernetes.io/name": "web", "empty": "", "k": a(63)},
			Annotations:     map[string]string{"Example.com/Upper": "case ignored", "example.com/note": "any: thing\n"},
			Finalizers:      []string{"example.com/cleanup", metav1.FinalizerOrphanDependents, "kubernetes"},
			OwnerReferences: []metav1.OwnerReference{ctrl, plain},
		}},
		{name: "annotations at the size limit", om: metav1.ObjectMeta{Name: "web",
			Annotations: map[string]string{"k": a(limit - 1)}}},

		// Both refuse.
		{name: "no name", om: metav1.ObjectMeta{}},
		{name: "upper-case name", om: metav1.ObjectMeta{Name: "Web"}},
		{name: "subdomain too long", om: metav1.ObjectMeta{Name: a(254)}},
		{name: "dot under label rule", rule: "label", om: metav1.ObjectMeta{Name: "a.b"}},
		{name: "too long for a label", rule: "label", om: metav1.ObjectMeta{Name: a(64)}},
		{name: "digit first under DNS-1035", rule: "dns1035", om: metav1.ObjectMeta{Name: "1web"}},
		{name: "slash in a path segment", rule: "rbac", om: metav1.ObjectMeta{Name: "a/b"}},
		{name: "dot-dot path segment", rule: "rbac", om: metav1.ObjectMeta{Name: ".."}},
		{name: "dot-dot generateName under path segment rule", rule: "rbac", om: metav1.ObjectMeta{GenerateName: ".."}},
		{name: "upper-case generateName", om: metav1.ObjectMeta{GenerateName: "Web-"}},
		{name: "generateName ending in a dot", om: metav1.ObjectMeta{GenerateName: "web."}},
		{name: "generateName too long for a label", rule: "label", om: metav1.ObjectMeta{GenerateName: a(64) + "-"}},
		{name: "namespace with a dot", om: metav1.ObjectMeta{Name: "web", Namespace: "my.ns"}},
		{name: "label key with a space", om: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"bad key": "v"}}},
		{name: "label key with an upper-case prefix", om: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"Example.com/k": "v"}}},
		{name: "label key without a name part", om: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"example.com/": "v"}}},
		{name: "label value", om: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"k": "-v"}}},
		{name: "label value too long", om: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"k": a(64)}}},
		{name: "annotation key with two slashes", om: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{"a/b/c": ""}}},
		{name: "empty annotation key", om: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{"": "v"}}},
		{name: "annotations over the size limit", om: metav1.ObjectMeta{Name: "web",
			Annotations: map[string]string{"k": a(limit / 2), "l": a(limit / 2)}}},
		{name: "finalizer with a space", om: metav1.ObjectMeta{Name: "web", Finalizers: []string{"example.com/not ok"}}},
		{name: "orphan and foreground", om: metav1.ObjectMeta{Name: "web",
			Finalizers: []string{metav1.FinalizerOrphanDependents, metav1.FinalizerDeleteDependents}}},
		{name: "empty owner reference", om: metav1.ObjectMeta{Name: "web", OwnerReferences: []metav1.OwnerReference{{}}}},
		{name: "owner apiVersion with two slashes", om: metav1.ObjectMeta{Name: "web",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1/x", Kind: "K", Name: "n", UID: "1"}}}},
		{name: "event as owner", om: metav1.ObjectMeta{Name: "web",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Event", Name: "e", UID: "1"}}}},
		{name: "two controllers", om: metav1.ObjectMeta{Name: "web", OwnerReferences: []metav1.OwnerReference{ctrl,
			{APIVersion: "v1", Kind: "Secret", Name: "s", UID: "2", Controller: new(true)}}}},

		// The Builder is stricter.
		{name: "finalizer without a domain", om: metav1.ObjectMeta{Name: "web", Finalizers: []string{"cleanup"}},
			stricter: []string{"finalizers"}},
		{name: "finalizer that is only a domain", om: metav1.ObjectMeta{Name: "web", Finalizers: []string{"example.com"}},
			stricter: []string{"finalizers"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := builderFor(tt.om).NameRule(nameRules[tt.rule]).Build()
			got := fieldsOf(problemsOf(t, err))
			want := fieldsOf(serverProblems(tt.om, tt.rule))
			want = sortedSet(append(want, tt.stricter...))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("fields refused (-server +Builder):\n%s\nBuilder: %v", diff, err)
			}
		})
	}
}

// builderFor sets everything in om on a Builder.
func builderFor(om metav1.ObjectMeta) *kopmeta.Builder {
	b := kopmeta.New(om.Name)
	if om.Name == "" && om.GenerateName != "" {
		b = kopmeta.GenerateName(om.GenerateName)
	}
	b.Namespace(om.Namespace).Labels(om.Labels).Annotations(om.Annotations)
	for _, f := range om.Finalizers {
		b.Finalizer(f)
	}
	for _, ref := range om.OwnerReferences {
		if ref.Controller != nil && *ref.Controller {
			b.ControlledBy(ownerFor(ref, om.Namespace), nil)
		} else {
			b.Owner(ownerFor(ref, om.Namespace), nil)
		}
	}
	return b
}

// serverProblems returns what the API server's validation of a create
// finds in om, with the name function the API server uses under rule.
// nameRules are the API server's name functions, as a user passes them to
// Builder.NameRule.
var nameRules = map[string]apivalidation.ValidateNameFunc{
	"":        apivalidation.NameIsDNSSubdomain,
	"label":   apivalidation.NameIsDNSLabel,
	"dns1035": apivalidation.NameIsDNS1035Label,
	// What kube-apiserver's RBAC validation (ValidateRBACName) does, for a
	// name and a generateName prefix alike.
	"rbac": func(name string, _ bool) []string { return content.IsPathSegmentName(name) },
}

func serverProblems(om metav1.ObjectMeta, rule string) []problem {
	nameFn := nameRules[rule]
	generated := om.Name == "" && om.GenerateName != ""
	if generated {
		// What the API server's name generator does before validation:
		// the prefix cut to 58 characters, then 5 random ones.
		om.Name = om.GenerateName[:min(len(om.GenerateName), 58)] + "x7k2q"
	}
	errs := apivalidation.ValidateObjectMetaAccessor(&om, om.Namespace != "", nameFn, field.NewPath("metadata"))
	var out []problem
	for _, e := range errs {
		// A bad prefix makes a bad generated name too; the Builder, which
		// never sees the generated name, reports the prefix only.
		if generated && e.Field == "metadata.name" && slices.ContainsFunc(errs, func(e *field.Error) bool {
			return e.Field == "metadata.generateName"
		}) {
			continue
		}
		out = append(out, problem{e.Type, e.Field, e.BadValue})
	}
	return out
}

// fieldsOf returns the ObjectMeta fields the problems are in, sorted and
// without repetition: "labels" for metadata.labels["k"] as for
// metadata.labels (the API server reports some problems on the map, the
// Builder on the key).
func fieldsOf(problems []problem) []string {
	out := make([]string, 0, len(problems))
	for _, p := range problems {
		f := strings.TrimPrefix(p.Field, "metadata.")
		if i := strings.IndexAny(f, ".["); i >= 0 {
			f = f[:i]
		}
		out = append(out, f)
	}
	return sortedSet(out)
}

func sortedSet(s []string) []string {
	set := map[string]bool{}
	for _, v := range s {
		set[v] = true
	}
	return slices.Sorted(maps.Keys(set))
}
