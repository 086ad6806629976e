package apply

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// toIntent turns the three accepted inputs into the unstructured intent sent
// to the server.
func toIntent(in any, scheme *runtime.Scheme) (*unstructured.Unstructured, error) {
	if in == nil || (reflect.ValueOf(in).Kind() == reflect.Pointer && reflect.ValueOf(in).IsNil()) {
		return nil, fmt.Errorf("cannot apply a nil %T", in)
	}
	switch v := in.(type) {
	case *unstructured.Unstructured:
		return v.DeepCopy(), nil
	case runtime.ApplyConfiguration:
		data, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("encode apply configuration %T: %w", v, err)
		}
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal(data, &u.Object); err != nil {
			return nil, fmt.Errorf("decode apply configuration %T: %w", v, err)
		}
		return u, nil
	case client.Object:
		gvk, err := apiutil.GVKForObject(v, scheme)
		if err != nil {
			return nil, err
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(v)
		if err != nil {
			return nil, fmt.Errorf("convert %T: %w", v, err)
		}
		u := &unstructured.Unstructured{Object: pruneTyped(m)}
		u.SetGroupVersionKind(gvk)
		return u, nil
	default:
		return nil, fmt.Errorf("cannot apply a %T: pass an apply configuration, an *unstructured.Unstructured or a typed object", in)
	}
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

// hashIntent hashes the intent as it will be sent, with the field owner and
// Force: an apply under another owner or with Force is another intent.
// encoding/json sorts map keys, so equal intents hash equal.
func hashIntent(u *unstructured.Unstructured, o ApplyOptions) ([32]byte, error) {
	data, err := json.Marshal(u.Object)
	if err != nil {
		return [32]byte{}, err
	}
	h := sha256.New()
	h.Write(data)
	h.Write([]byte{0})
	h.Write([]byte(o.FieldOwner))
	if o.Force {
		h.Write([]byte{0, 'F'})
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum, nil
}
