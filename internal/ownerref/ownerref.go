// Package ownerref holds kopgo's owner-reference rules, shared by the owners
// package (which reports them as koperrors of Kind Invalid) and the meta
// package (which reports them in a kopmeta.ValidationError): how an owner's
// kind is found, how a reference is built and merged into an object's list,
// and what the API server accepts but the garbage collector will not honour.
//
// It imports no other kopgo package (package meta, which everything else
// imports, uses it), and reports problems as field errors at the path of the
// reference, so each caller words them its own way.
package ownerref

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// KindOf returns owner's kind: from scheme, or, when scheme is nil, from
// owner's TypeMeta (set on unstructured objects, empty on a typed object
// read through a client).
func KindOf(owner client.Object, scheme *runtime.Scheme) (schema.GroupVersionKind, error) {
	if scheme != nil {
		return apiutil.GVKForObject(owner, scheme)
	}
	gvk := owner.GetObjectKind().GroupVersionKind()
	if gvk.Kind == "" || gvk.Version == "" {
		return schema.GroupVersionKind{}, errors.New("its kind is unknown: pass a scheme that knows its type (a typed object read through a client has an empty TypeMeta)")
	}
	return gvk, nil
}

// For returns the reference to owner, of kind gvk. A controller reference
// has controller and blockOwnerDeletion set; an owner reference neither.
func For(owner metav1.Object, gvk schema.GroupVersionKind, controller bool) metav1.OwnerReference {
	ref := metav1.OwnerReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: owner.GetName(), UID: owner.GetUID()}
	if controller {
		ref.Controller, ref.BlockOwnerDeletion = new(true), new(true)
	}
	return ref
}

// IsNil reports a nil interface or a nil pointer in a non-nil interface,
// either of which would panic on the first method call.
func IsNil(o any) bool {
	if o == nil {
		return true
	}
	switch v := reflect.ValueOf(o); v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		return v.IsNil()
	}
	return false
}

// Child is what the rules need of the object that gets the reference: its
// namespace ("" for a cluster-scoped object, or one not yet given its
// namespace) and its UID ("" before it is created).
type Child struct {
	Namespace string
	UID       types.UID
}

// Check returns what is wrong with giving child the reference ref to an
// owner in namespace ownerNS ("" for a cluster-scoped owner), at p, the
// reference's path:
//
//   - name and uid must be set (apiVersion and kind are, by [KindOf]), and
//     the kind may own (an Event may not);
//   - the owner must be in the child's namespace, unless it is
//     cluster-scoped: the garbage collector looks for a namespaced owner in
//     the child's namespace, finds nothing and deletes the child;
//   - a namespaced owner cannot own a cluster-scoped object: the reference
//     is never resolved, and the object never collected;
//   - an object cannot own itself.
//
// A second controller is a property of the whole list: see [Controllers].
func Check(p *field.Path, ref metav1.OwnerReference, ownerNS string, child Child) field.ErrorList {
	var errs field.ErrorList
	// Named in errors only: no string built for a reference that passes.
	describe := func() string { return Describe(ref, ownerNS) }
	if ref.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), "the owner's name"))
	}
	if _, banned := apivalidation.BannedOwners[schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)]; banned {
		errs = append(errs, field.Invalid(p.Child("kind"), ref.Kind, fmt.Sprintf("%s %s cannot be an owner", ref.APIVersion, ref.Kind)))
	}
	switch ref.UID {
	case "":
		errs = append(errs, field.Required(p.Child("uid"),
			fmt.Sprintf("owner %s has no UID: create it (or read it from the API server) before it can own anything", describe())))
	case child.UID:
		errs = append(errs, field.Invalid(p.Child("uid"), ref.UID, describe()+" cannot own itself"))
	}
	switch {
	case ownerNS == "":
	case child.Namespace == "":
		errs = append(errs, field.Invalid(p, ownerNS, fmt.Sprintf(
			"namespaced owner %s cannot own an object without a namespace: a cluster-scoped object's owners must be cluster-scoped (if it is namespaced, set its namespace first)",
			describe())))
	case ownerNS != child.Namespace:
		errs = append(errs, field.Invalid(p, ownerNS, fmt.Sprintf(
			"owner %s is in namespace %q, not %q: owner references do not cross namespaces (the garbage collector would find no owner and delete the object)",
			describe(), ownerNS, child.Namespace)))
	}
	return errs
}

// Controllers returns an error for each controller reference in refs after
// the first, where it or the first is one of those added (the rest were on
// the object already: not the caller's doing). p is the list's path.
func Controllers(p *field.Path, refs []metav1.OwnerReference, added func(i int) bool) field.ErrorList {
	var errs field.ErrorList
	first := -1
	for i, ref := range refs {
		if !isTrue(ref.Controller) {
			continue
		}
		if first < 0 {
			first = i
			continue
		}
		if added(i) || added(first) {
			cur := refs[first]
			errs = append(errs, field.Invalid(p.Index(i).Child("controller"), true,
				fmt.Sprintf("already controlled by %s %s (uid %s): %s %s cannot be a second controller",
					cur.Kind, cur.Name, cur.UID, ref.Kind, ref.Name)))
		}
	}
	return errs
}

// Merge returns a new list: refs (deep copies) with add in place of the
// reference to the same object (same group, kind and name, any version or
// UID: an owner deleted and created again is the same owner, as in
// controllerutil), or appended; and the index add has in it. A controller
// reference stays one, and blockOwnerDeletion, when add leaves it unset,
// keeps its value: adding an owner again never demotes its controller.
func Merge(refs []metav1.OwnerReference, add metav1.OwnerReference) ([]metav1.OwnerReference, int) {
	out := make([]metav1.OwnerReference, len(refs), len(refs)+1)
	for i := range refs {
		out[i] = *refs[i].DeepCopy()
	}
	i := -1
	if add.Kind != "" && add.Name != "" {
		i = slices.IndexFunc(out, func(r metav1.OwnerReference) bool { return SameObject(r, add) })
	}
	next := *add.DeepCopy()
	if i < 0 {
		return append(out, next), len(out)
	}
	if isTrue(out[i].Controller) && !isTrue(next.Controller) {
		next.Controller = new(true)
	}
	if next.BlockOwnerDeletion == nil && out[i].BlockOwnerDeletion != nil {
		next.BlockOwnerDeletion = new(*out[i].BlockOwnerDeletion)
	}
	out[i] = next
	return out, i
}

// SameObject reports whether two references name the same object, across
// versions and UIDs.
func SameObject(a, b metav1.OwnerReference) bool {
	return a.Kind == b.Kind && a.Name == b.Name && GroupOf(a.APIVersion) == GroupOf(b.APIVersion)
}

// GroupOf returns the group of an apiVersion; an invalid one never equals
// a valid group.
func GroupOf(apiVersion string) string {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return "\x00" + apiVersion
	}
	return gv.Group
}

// Describe names an owner in messages: "Deployment shop/web", "ClusterRole
// reader".
func Describe(ref metav1.OwnerReference, namespace string) string {
	kind, key := ref.Kind, ref.Name
	if kind == "" {
		kind = "owner"
	}
	if namespace != "" {
		key = namespace + "/" + key
	}
	return kind + " " + key
}

func isTrue(b *bool) bool { return b != nil && *b }

// Attach merges ref, a reference to an owner in namespace ownerNS, into
// obj's owner references ([Merge]) once the rules allow it ([Check], and
// [Controllers] for the reference added): obj is left unchanged otherwise,
// and the problems' details are returned joined in one error, worded for
// a reference, not for a field path.
func Attach(obj client.Object, ref metav1.OwnerReference, ownerNS string) error {
	refs, i := Merge(obj.GetOwnerReferences(), ref)
	errs := Check(refsPath.Index(i), ref, ownerNS, Child{Namespace: obj.GetNamespace(), UID: obj.GetUID()})
	errs = append(errs, Controllers(refsPath, refs, func(j int) bool { return j == i })...)
	if err := Joined(errs); err != nil {
		return err
	}
	obj.SetOwnerReferences(refs)
	return nil
}

// refsPath is the path of an object's owner references.
var refsPath = field.NewPath("metadata", "ownerReferences")

// Joined is the problems' details as one error, nil for none.
func Joined(errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	details := make([]string, len(errs))
	for i, e := range errs {
		details[i] = e.Detail
	}
	return errors.New(strings.Join(details, "; "))
}
