package status

import (
	"fmt"
	"reflect"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// statusOf returns obj's .status as unstructured data: nil when it has
// none or an empty one, so that absent, null and {} compare equal.
//
// A typed object's status field is found once per Go type and converted
// alone: converting the whole object (its managedFields and spec
// included) to read its status was the larger part of a converged
// reconcile's CPU.
func statusOf(obj client.Object) (any, error) {
	if u, ok := obj.(runtime.Unstructured); ok {
		return emptyIsNil(runtime.DeepCopyJSONValue(u.UnstructuredContent()["status"])), nil
	}
	f, _, ok := typedField(obj)
	if !ok {
		// Not a pointer to a struct with a struct status: convert the
		// whole object, as the API would.
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, fmt.Errorf("convert the status of %T to unstructured: %w", obj, err)
		}
		return emptyIsNil(m["status"]), nil
	}
	st, err := unstructuredStatus(f)
	if err != nil {
		return nil, fmt.Errorf("convert the status of %T to unstructured: %w", obj, err)
	}
	return st, nil
}

// unstructuredStatus converts a typed status (a struct, or a pointer to
// one) to unstructured data; nil for none or an empty one.
func unstructuredStatus(f reflect.Value) (any, error) {
	if !f.IsValid() {
		return nil, nil // the type has no status field
	}
	if f.Kind() == reflect.Struct {
		if !f.CanAddr() {
			c := reflect.New(f.Type())
			c.Elem().Set(f)
			f = c.Elem()
		}
		f = f.Addr()
	}
	if f.IsNil() {
		return nil, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(f.Interface())
	if err != nil {
		return nil, err
	}
	return emptyIsNil(m), nil
}

func emptyIsNil(st any) any {
	if m, ok := st.(map[string]any); ok && len(m) == 0 {
		return nil
	}
	return st
}

// statusType is what the package knows of one Go type's status field.
type statusType struct {
	field int // index of the field serialised as "status"; -1: none
	// copy deep-copies the field's value with its type's DeepCopy method;
	// nil when the type has none.
	copy func(reflect.Value) reflect.Value
}

// statusTypes caches a statusType per struct type.
var statusTypes sync.Map // reflect.Type -> statusType

// typedField returns obj's status field (an invalid Value when its type
// has none) and what is known of it; ok is false when obj is not a
// pointer to a struct or its status is neither a struct nor a pointer to
// one.
func typedField(obj client.Object) (reflect.Value, statusType, bool) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}, statusType{}, false
	}
	v = v.Elem()
	c, ok := statusTypes.Load(v.Type())
	if !ok {
		c = newStatusType(v.Type())
		statusTypes.Store(v.Type(), c)
	}
	st := c.(statusType)
	if st.field < 0 {
		return reflect.Value{}, st, true
	}
	f := v.Field(st.field)
	if k := f.Kind(); k != reflect.Struct && (k != reflect.Pointer || f.Type().Elem().Kind() != reflect.Struct) {
		return reflect.Value{}, statusType{}, false
	}
	return f, st, true
}

// newStatusType finds t's exported field whose JSON name is "status" and
// the DeepCopy method of its type (controller-gen writes one for every
// API type: func (in *S) DeepCopy() *S).
func newStatusType(t reflect.Type) statusType {
	st := statusType{field: -1}
	for i := range t.NumField() {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); f.IsExported() && name == "status" {
			st.field = i
			break
		}
	}
	if st.field < 0 {
		return st
	}
	ft := t.Field(st.field).Type
	ptr := ft
	if ft.Kind() != reflect.Pointer {
		ptr = reflect.PointerTo(ft)
	}
	m, ok := ptr.MethodByName("DeepCopy")
	if !ok || ptr.Elem().Kind() != reflect.Struct || m.Type.NumIn() != 1 || m.Type.NumOut() != 1 || m.Type.Out(0) != ptr {
		return st
	}
	st.copy = func(f reflect.Value) reflect.Value {
		if ft.Kind() == reflect.Pointer {
			if f.IsNil() {
				return reflect.Zero(ft)
			}
			return m.Func.Call([]reflect.Value{f})[0]
		}
		return m.Func.Call([]reflect.Value{f.Addr()})[0].Elem()
	}
	return st
}
