package apply

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	sigsjson "sigs.k8s.io/json"
)

// intent is the desired state of one apply: its kind, namespace and name,
// and the caller's input it is made of. The input's hash is all that an
// apply the cache proves unchanged needs ([hashIntent], which encodes
// nothing); the object sent is made from it only when it is sent or checked
// against the cache's copy.
type intent struct {
	gvk             schema.GroupVersionKind
	namespace, name string
	// input is the caller's: an apply configuration, an unstructured
	// object or a typed one, read during the apply and never changed.
	input any
	typed client.Object // the typed input, pruned into u on demand
	u     *unstructured.Unstructured
	// owner is the intent's controller reference (an owner reference
	// with controller: true), nil when it has none.
	owner *metav1.OwnerReference
}

// object returns the intent as an unstructured object of its own (made the
// first time, never the caller's input). An apply decodes the server's
// answer into it; [intent.fresh] makes another.
func (in *intent) object() (*unstructured.Unstructured, error) {
	if in.u != nil {
		return in.u, nil
	}
	u, err := in.fresh()
	if err != nil {
		return nil, err
	}
	in.u = u
	return u, nil
}

// fresh returns the intent as a new unstructured object.
func (in *intent) fresh() (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if in.typed != nil {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(in.typed)
		if err != nil {
			return nil, fmt.Errorf("convert %T: %w", in.typed, err)
		}
		u.Object = pruneTyped(m)
		u.SetGroupVersionKind(in.gvk)
	} else {
		// Through JSON, as the input would be sent: an apply configuration
		// has no other form, and an unstructured object's values become
		// JSON's (an int an int64).
		data, err := json.Marshal(in.input)
		if err != nil {
			return nil, fmt.Errorf("encode %T: %w", in.input, err)
		}
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, &u.Object); err != nil {
			return nil, fmt.Errorf("decode intent: %w", err)
		}
	}
	if u.Object == nil {
		return nil, fmt.Errorf("decode intent: not an object")
	}
	return u, nil
}

// objectMeta is what client-go's apply configurations tell of their object
// without an encoding (the interface controller-runtime's client.Apply
// needs).
type objectMeta interface {
	GetAPIVersion() *string
	GetKind() *string
	GetName() *string
	GetNamespace() *string
}

// toIntent turns the three accepted inputs into the intent sent to the
// server, without encoding them.
func toIntent(in any, scheme *runtime.Scheme) (*intent, error) {
	if in == nil || (reflect.ValueOf(in).Kind() == reflect.Pointer && reflect.ValueOf(in).IsNil()) {
		return nil, fmt.Errorf("cannot apply a nil %T", in)
	}
	switch v := in.(type) {
	case *unstructured.Unstructured:
		// Sent as a copy ([intent.fresh]): the apply decodes the server's
		// answer into its intent, and v is the caller's.
		out := &intent{gvk: v.GroupVersionKind(), namespace: v.GetNamespace(), name: v.GetName(), input: v}
		var err error
		out.owner, err = unstructuredController(v.Object)
		if err != nil {
			return nil, err
		}
		return out, nil
	case runtime.ApplyConfiguration:
		out := &intent{input: v}
		if m, ok := v.(objectMeta); ok {
			gv, err := schema.ParseGroupVersion(ptr.Deref(m.GetAPIVersion(), ""))
			if err != nil {
				return nil, fmt.Errorf("apply configuration %T: %w", v, err)
			}
			out.gvk = gv.WithKind(ptr.Deref(m.GetKind(), ""))
			out.namespace, out.name = ptr.Deref(m.GetNamespace(), ""), ptr.Deref(m.GetName(), "")
			if meta, ok := applyConfigurationMeta(v); ok {
				out.owner, err = applyConfigurationController(meta)
				if err != nil {
					return nil, err
				}
				return out, nil
			}
		}
		u, err := out.object()
		if err != nil {
			return nil, fmt.Errorf("apply configuration %T: %w", v, err)
		}
		out.gvk, out.namespace, out.name = u.GroupVersionKind(), u.GetNamespace(), u.GetName()
		if out.owner, err = unstructuredController(u.Object); err != nil {
			return nil, err
		}
		return out, nil
	case client.Object:
		gvk, err := gvkOf(v, scheme)
		if err != nil {
			return nil, err
		}
		// Equal objects send equal intents, so the object itself
		// identifies the intent, and costs less than pruning it.
		out := &intent{gvk: gvk, namespace: v.GetNamespace(), name: v.GetName(), input: v, typed: v}
		for i, r := range v.GetOwnerReferences() {
			if ptr.Deref(r.Controller, false) {
				out.owner = &metav1.OwnerReference{APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name, UID: r.UID, Controller: new(true)}
				return out, checkControllerRef(out.owner, i)
			}
		}
		return out, nil
	default:
		return nil, fmt.Errorf("cannot apply a %T: pass an apply configuration, an *unstructured.Unstructured or a typed object", in)
	}
}

// gvkOf returns the kind of a typed object: the scheme's, else (a type the
// scheme does not know, such as a custom resource's without a manager) the
// apiVersion and kind the object carries.
func gvkOf(obj client.Object, scheme *runtime.Scheme) (schema.GroupVersionKind, error) {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err == nil {
		return gvk, nil
	}
	if own := obj.GetObjectKind().GroupVersionKind(); own.Kind != "" && own.Version != "" {
		return own, nil
	}
	return schema.GroupVersionKind{}, fmt.Errorf("%w: register the type in the Applier's scheme (apply.WithScheme, or the manager's with apply.WithCluster), or set its apiVersion and kind", err)
}

// metaFields caches, per apply configuration type, the index of its
// embedded *ObjectMetaApplyConfiguration field (-1 when it has none).
var metaFields sync.Map // reflect.Type -> int

var objectMetaACType = reflect.TypeFor[*metav1ac.ObjectMetaApplyConfiguration]()

// applyConfigurationMeta returns the metadata of an apply configuration
// generated by client-go's applyconfiguration-gen (which embeds
// *ObjectMetaApplyConfiguration), without encoding it.
func applyConfigurationMeta(ac any) (*metav1ac.ObjectMetaApplyConfiguration, bool) {
	v := reflect.ValueOf(ac)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	v = v.Elem()
	idx, ok := metaFields.Load(v.Type())
	if !ok {
		i := -1
		if f, found := v.Type().FieldByName("ObjectMetaApplyConfiguration"); found && f.Anonymous && len(f.Index) == 1 && f.Type == objectMetaACType {
			i = f.Index[0]
		}
		idx, _ = metaFields.LoadOrStore(v.Type(), i)
	}
	i := idx.(int)
	if i < 0 {
		return nil, false
	}
	meta, _ := reflect.TypeAssert[*metav1ac.ObjectMetaApplyConfiguration](v.Field(i))
	return meta, true
}

// applyConfigurationController returns the controller reference of an apply
// configuration's metadata (nil when there is none), an error when it is
// not a complete reference.
func applyConfigurationController(meta *metav1ac.ObjectMetaApplyConfiguration) (*metav1.OwnerReference, error) {
	if meta == nil {
		return nil, nil
	}
	for i, r := range meta.OwnerReferences {
		if !ptr.Deref(r.Controller, false) {
			continue
		}
		ref := &metav1.OwnerReference{
			APIVersion: ptr.Deref(r.APIVersion, ""), Kind: ptr.Deref(r.Kind, ""), Name: ptr.Deref(r.Name, ""),
			UID: ptr.Deref(r.UID, ""), Controller: new(true),
		}
		return ref, checkControllerRef(ref, i)
	}
	return nil, nil
}

// unstructuredController returns the controller reference in an object's
// metadata.ownerReferences (nil when there is none), an error when it is
// not a complete reference.
func unstructuredController(obj map[string]any) (*metav1.OwnerReference, error) {
	md, _ := obj["metadata"].(map[string]any)
	refs, _ := md["ownerReferences"].([]any)
	for i, r := range refs {
		m, _ := r.(map[string]any)
		if c, _ := m["controller"].(bool); !c {
			continue
		}
		str := func(k string) string { s, _ := m[k].(string); return s }
		ref := &metav1.OwnerReference{
			APIVersion: str("apiVersion"), Kind: str("kind"), Name: str("name"),
			UID: types.UID(str("uid")), Controller: new(true),
		}
		return ref, checkControllerRef(ref, i)
	}
	return nil, nil
}

// checkControllerRef refuses a controller reference without a UID: the
// Applier compares controllers by UID (so does the garbage collector).
func checkControllerRef(ref *metav1.OwnerReference, i int) error {
	if ref.UID == "" {
		return fmt.Errorf("metadata.ownerReferences[%d].uid is required: the controller reference to %s %s names no UID", i, ref.Kind, ref.Name)
	}
	return nil
}

// serverOwnedMetadata are metadata fields a typed object carries once read
// from the server; sending them would set preconditions or be rejected.
var serverOwnedMetadata = []string{
	"creationTimestamp", "resourceVersion", "uid", "generation", "managedFields",
	"selfLink", "deletionTimestamp", "deletionGracePeriodSeconds",
}

// pruneTyped removes from a typed object's unstructured form what the
// caller did not mean to own: status, server-owned metadata, and the nulls
// and empty objects that Go's zero values (non-pointer structs, nil maps
// without omitempty) produce.
func pruneTyped(m map[string]any) map[string]any {
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		for _, f := range serverOwnedMetadata {
			delete(md, f)
		}
	}
	pruneEmpty(m)
	return m
}

// pruneEmpty removes nil values and maps that are empty once pruned. Lists
// are kept (an empty list is a statement); maps inside them are pruned.
func pruneEmpty(m map[string]any) {
	for k, v := range m {
		switch val := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			pruneEmpty(val)
			if len(val) == 0 {
				delete(m, k)
			}
		case []any:
			for _, item := range val {
				if im, ok := item.(map[string]any); ok {
					pruneEmpty(im)
				}
			}
		}
	}
}
