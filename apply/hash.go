package apply

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The intent's identity is a SHA-256 of the input's Go value, walked
// field by field, never encoded: an apply the record proves unchanged
// (the steady state of a converged reconcile) then costs a walk of the
// value and no allocation, where json.Marshal cost most of the apply
// (BenchmarkApplyConverged).
//
// Equal values hash equal: the walk reads what the JSON encoding is a
// function of (every field, map keys sorted, nil told from empty, the
// dynamic type of an interface), so two values that hash equal encode to
// the same JSON and send the same intent. Values that encode alike but
// differ in Go (a Quantity built two ways, a time with and without a
// monotonic reading) may hash apart; that costs a proof from the cached
// object, never a wrong Unchanged. The hash is compared only within the
// process (the Applier's records, a Fake's), so type identities are
// numbered per process.

// maxDepth bounds the walk, as encoding/json bounds its own: a deeper
// value (a cycle) is refused.
const maxDepth = 1000

// hashIntent hashes the input of an apply with the field owner and Force:
// an apply under another owner or with Force is another intent.
//
// A value the walk cannot take (a func or channel field the encoding
// skips, a map keyed by numbers) is hashed by its JSON encoding instead.
func hashIntent(in *intent, o *client.ApplyOptions) ([32]byte, error) {
	w := hasherPool.Get().(*valueHasher)
	defer w.release()
	w.reset()
	if err := w.any(reflect.ValueOf(in.input), 0); err != nil {
		data, jerr := json.Marshal(in.input)
		if jerr != nil {
			return [32]byte{}, fmt.Errorf("encode %T: %w", in.input, jerr)
		}
		w.reset()
		w.byte('J')
		w.bytes(data)
	}
	w.str(o.FieldManager)
	w.bool(forced(o))
	return w.sum(), nil
}

var hasherPool = sync.Pool{New: func() any { return &valueHasher{buf: make([]byte, 0, 2048)} }}

// maxPooledBuffer is the largest buffer a hasher keeps for the next intent.
const maxPooledBuffer = 64 << 10

// valueHasher writes values into a buffer, hashed at the end.
type valueHasher struct {
	buf     []byte
	scratch [64]byte // a quantity's canonical form
}

func (w *valueHasher) reset() { w.buf = w.buf[:0] }

func (w *valueHasher) sum() [32]byte { return sha256.Sum256(w.buf) }

func (w *valueHasher) release() {
	if cap(w.buf) <= maxPooledBuffer {
		hasherPool.Put(w)
	}
}

func (w *valueHasher) byte(b byte) { w.buf = append(w.buf, b) }

func (w *valueHasher) bool(b bool) {
	if b {
		w.byte(1)
	} else {
		w.byte(0)
	}
}

func (w *valueHasher) uint(u uint64) { w.buf = binary.AppendUvarint(w.buf, u) }

func (w *valueHasher) str(s string) {
	w.uint(uint64(len(s)))
	w.buf = append(w.buf, s...)
}

func (w *valueHasher) bytes(b []byte) {
	w.uint(uint64(len(b)))
	w.buf = append(w.buf, b...)
}

// typeIDs numbers the types met in interfaces, per process.
var (
	typeIDs    sync.Map // reflect.Type -> uint64
	nextTypeID atomic.Uint64
)

func (w *valueHasher) typ(t reflect.Type) {
	id, ok := typeIDs.Load(t)
	if !ok {
		id, _ = typeIDs.LoadOrStore(t, nextTypeID.Add(1))
	}
	w.uint(id.(uint64))
}

// any writes v's dynamic type and value (0 for a nil interface or pointer).
func (w *valueHasher) any(v reflect.Value, depth int) error {
	if !v.IsValid() {
		w.byte(0)
		return nil
	}
	w.byte(1)
	w.typ(v.Type())
	return w.value(v, depth)
}

var (
	timeType     = reflect.TypeFor[time.Time]()
	stringsType  = reflect.TypeFor[map[string]string]()
	anyMapType   = reflect.TypeFor[map[string]any]()
	resourceType = reflect.TypeFor[corev1.ResourceList]()
	quantityType = reflect.TypeFor[resource.Quantity]()
	// timeLayout is whether time.Time is (wall uint64, ext int64, loc
	// *Location{name string, ...}), as the walk of a time expects; else
	// times are walked like any struct.
	timeLayout = func() bool {
		loc := timeType.Field(2).Type
		return timeType.NumField() == 3 && timeType.Field(0).Type.Kind() == reflect.Uint64 &&
			timeType.Field(1).Type.Kind() == reflect.Int64 && loc.Kind() == reflect.Pointer &&
			loc.Elem().Kind() == reflect.Struct && loc.Elem().Field(0).Type.Kind() == reflect.String
	}()
)

func (w *valueHasher) value(v reflect.Value, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("value nested deeper than %d (a cycle?)", maxDepth)
	}
	switch v.Kind() {
	case reflect.Bool:
		w.bool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		w.uint(uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		w.uint(v.Uint())
	case reflect.Float32, reflect.Float64:
		w.uint(math.Float64bits(v.Float()))
	case reflect.String:
		w.str(v.String())
	case reflect.Pointer:
		if v.IsNil() {
			w.byte(0)
			return nil
		}
		w.byte(1)
		return w.value(v.Elem(), depth+1)
	case reflect.Interface:
		if v.IsNil() {
			w.byte(0)
			return nil
		}
		return w.any(v.Elem(), depth+1)
	case reflect.Struct:
		switch {
		case v.Type() == timeType && timeLayout:
			return w.time(v)
		case v.Type() == quantityType && v.CanAddr() && v.CanInterface():
			w.quantity(v.Addr().Interface().(*resource.Quantity))
			return nil
		}
		for i := range v.NumField() {
			if err := w.value(v.Field(i), depth+1); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if v.IsNil() {
			w.byte(0)
			return nil
		}
		w.byte(1)
		if v.Type().Elem().Kind() == reflect.Uint8 {
			w.bytes(v.Bytes())
			return nil
		}
		fallthrough
	case reflect.Array:
		n := v.Len()
		w.uint(uint64(n))
		for i := range n {
			if err := w.value(v.Index(i), depth+1); err != nil {
				return err
			}
		}
	case reflect.Map:
		if v.IsNil() {
			w.byte(0)
			return nil
		}
		w.byte(1)
		return w.mapValue(v, depth)
	default:
		return fmt.Errorf("cannot hash a %s", v.Type())
	}
	return nil
}

// time writes a time.Time: its unexported fields, which hold the instant
// (and a monotonic reading, which only splits equal instants), and the
// name of its location, which the encoding may print.
func (w *valueHasher) time(v reflect.Value) error {
	w.uint(v.Field(0).Uint())
	w.uint(uint64(v.Field(1).Int()))
	loc := v.Field(2)
	if loc.IsNil() {
		w.byte(0)
		return nil
	}
	w.byte(1)
	w.str(loc.Elem().Field(0).String())
	return nil
}

// quantity writes a quantity as what its JSON is a function of: its value
// in canonical decimal form, and its format.
func (w *valueHasher) quantity(q *resource.Quantity) {
	number, exponent := q.AsCanonicalBytes(w.scratch[:0])
	w.bytes(number)
	w.uint(uint64(exponent))
	w.str(string(q.Format))
}

// mapValue writes a map's entries in key order. The usual maps of
// Kubernetes objects take a path without reflection, and without an
// allocation for up to 16 keys.
func (w *valueHasher) mapValue(v reflect.Value, depth int) error {
	w.uint(uint64(v.Len()))
	switch {
	case v.Type() == stringsType && v.CanInterface():
		m := v.Interface().(map[string]string)
		var small [16]string
		keys := small[:0]
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			w.str(k)
			w.str(m[k])
		}
		return nil
	case v.Type() == resourceType && v.CanInterface():
		m := v.Interface().(corev1.ResourceList)
		var small [16]corev1.ResourceName
		keys := small[:0]
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			w.str(string(k))
			q := m[k]
			w.quantity(&q)
		}
		return nil
	case v.Type() == anyMapType && v.CanInterface():
		return w.anyMap(v.Interface().(map[string]any), depth)
	case v.Type().Key().Kind() != reflect.String:
		return fmt.Errorf("cannot hash a %s: its keys are not strings", v.Type())
	}
	keys := v.MapKeys()
	slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
	for _, k := range keys {
		w.str(k.String())
		if err := w.value(v.MapIndex(k), depth+1); err != nil {
			return err
		}
	}
	return nil
}

// anyMap writes an unstructured object's map without reflection for the
// JSON types.
func (w *valueHasher) anyMap(m map[string]any, depth int) error {
	var small [16]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		w.str(k)
		if err := w.anyJSON(m[k], depth+1); err != nil {
			return err
		}
	}
	return nil
}

func (w *valueHasher) anyJSON(x any, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("value nested deeper than %d (a cycle?)", maxDepth)
	}
	switch val := x.(type) {
	case string:
		w.byte('s')
		w.str(val)
	case map[string]any:
		w.byte('m')
		if val == nil {
			w.byte(0)
			return nil
		}
		w.byte(1)
		w.uint(uint64(len(val)))
		return w.anyMap(val, depth)
	case []any:
		w.byte('l')
		if val == nil {
			w.byte(0)
			return nil
		}
		w.byte(1)
		w.uint(uint64(len(val)))
		for _, item := range val {
			if err := w.anyJSON(item, depth+1); err != nil {
				return err
			}
		}
	case bool:
		w.byte('b')
		w.bool(val)
	case int64:
		w.byte('i')
		w.uint(uint64(val))
	case float64:
		w.byte('f')
		w.uint(math.Float64bits(val))
	case nil:
		w.byte('n')
	default:
		w.byte('r')
		return w.any(reflect.ValueOf(x), depth+1)
	}
	return nil
}
