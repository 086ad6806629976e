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
// numbered per process. The walk appends to a local buffer (a pooled
// one's backing array), as strconv's Append functions do, so that it stores
// no pointer into the heap while it runs.

// maxDepth bounds the walk, as encoding/json bounds its own: a deeper
// value (a cycle) is refused.
const maxDepth = 1000

// hashIntent hashes the input of an apply with the field owner and Force:
// an apply under another owner or with Force is another intent.
//
// A value the walk cannot take (a func or channel field the encoding
// skips, a map keyed by numbers) is hashed by its JSON encoding instead.
func hashIntent(in *intent, o *client.ApplyOptions) (digest, error) {
	pooled := bufferPool.Get().(*[]byte)
	b, err := appendAny((*pooled)[:0], reflect.ValueOf(in.input), 0)
	if err != nil {
		data, jerr := json.Marshal(in.input)
		if jerr != nil {
			return digest{}, fmt.Errorf("encode %T: %w", in.input, jerr)
		}
		b = appendBytes(append(b[:0], 'J'), data)
	}
	b = appendString(b, o.FieldManager)
	b = appendBool(b, forced(o))
	sum := digestOf(b)
	if cap(b) <= maxPooledBuffer {
		*pooled = b
		bufferPool.Put(pooled)
	}
	return sum, nil
}

// digest identifies an intent or a set of fields: the first 128 bits of
// their SHA-256, which is what telling two of them apart needs, in half
// the memory of the whole sum (the Applier keeps two per object).
type digest [16]byte

func digestOf(b []byte) digest {
	sum := sha256.Sum256(b)
	return digest(sum[:16])
}

var bufferPool = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// maxPooledBuffer is the largest buffer kept for the next intent.
const maxPooledBuffer = 64 << 10

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendBytes(b, p []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(p)))
	return append(b, p...)
}

// typeIDs numbers the types met in interfaces, per process.
var (
	typeIDs    sync.Map // reflect.Type -> uint64
	nextTypeID atomic.Uint64
)

func appendType(b []byte, t reflect.Type) []byte {
	id, ok := typeIDs.Load(t)
	if !ok {
		id, _ = typeIDs.LoadOrStore(t, nextTypeID.Add(1))
	}
	return binary.AppendUvarint(b, id.(uint64))
}

// appendAny appends v's dynamic type and value (0 for a nil interface or
// pointer).
func appendAny(b []byte, v reflect.Value, depth int) ([]byte, error) {
	if !v.IsValid() {
		return append(b, 0), nil
	}
	b = appendType(append(b, 1), v.Type())
	return appendValue(b, v, depth)
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

func errTooDeep() error { return fmt.Errorf("value nested deeper than %d (a cycle?)", maxDepth) }

func appendValue(b []byte, v reflect.Value, depth int) ([]byte, error) {
	if depth > maxDepth {
		return b, errTooDeep()
	}
	switch v.Kind() {
	case reflect.Bool:
		return appendBool(b, v.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return binary.AppendUvarint(b, uint64(v.Int())), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return binary.AppendUvarint(b, v.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return binary.AppendUvarint(b, math.Float64bits(v.Float())), nil
	case reflect.String:
		return appendString(b, v.String()), nil
	case reflect.Pointer:
		if v.IsNil() {
			return append(b, 0), nil
		}
		return appendValue(append(b, 1), v.Elem(), depth+1)
	case reflect.Interface:
		if v.IsNil() {
			return append(b, 0), nil
		}
		return appendAny(b, v.Elem(), depth+1)
	case reflect.Struct:
		switch {
		case v.Type() == timeType && timeLayout:
			return appendTime(b, v), nil
		case v.Type() == quantityType && v.CanAddr() && v.CanInterface():
			return appendQuantity(b, v.Addr().Interface().(*resource.Quantity)), nil
		}
		var err error
		for i := range v.NumField() { //nolint:modernize // Value.Fields makes a StructField per field, which the walk has no use for
			if b, err = appendValue(b, v.Field(i), depth+1); err != nil {
				return b, err
			}
		}
		return b, nil
	case reflect.Slice:
		if v.IsNil() {
			return append(b, 0), nil
		}
		b = append(b, 1)
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return appendBytes(b, v.Bytes()), nil
		}
		fallthrough
	case reflect.Array:
		n := v.Len()
		b = binary.AppendUvarint(b, uint64(n))
		var err error
		for i := range n {
			if b, err = appendValue(b, v.Index(i), depth+1); err != nil {
				return b, err
			}
		}
		return b, nil
	case reflect.Map:
		if v.IsNil() {
			return append(b, 0), nil
		}
		return appendMap(append(b, 1), v, depth)
	default:
		return b, fmt.Errorf("cannot hash a %s", v.Type())
	}
}

// appendTime appends a time.Time: its unexported fields, which hold the
// instant (and a monotonic reading, which only splits equal instants), and
// the name of its location, which the encoding may print.
func appendTime(b []byte, v reflect.Value) []byte {
	b = binary.AppendUvarint(b, v.Field(0).Uint())
	b = binary.AppendUvarint(b, uint64(v.Field(1).Int()))
	loc := v.Field(2)
	if loc.IsNil() {
		return append(b, 0)
	}
	return appendString(append(b, 1), loc.Elem().Field(0).String())
}

// appendQuantity appends a quantity as what its JSON is a function of:
// its value in canonical decimal form, and its format.
func appendQuantity(b []byte, q *resource.Quantity) []byte {
	var scratch [64]byte
	number, exponent := q.AsCanonicalBytes(scratch[:0])
	b = appendBytes(b, number)
	b = binary.AppendUvarint(b, uint64(exponent))
	return appendString(b, string(q.Format))
}

// appendMap appends a map's entries in key order. The usual maps of
// Kubernetes objects take a path without reflection, and without an
// allocation for up to 16 keys.
func appendMap(b []byte, v reflect.Value, depth int) ([]byte, error) {
	b = binary.AppendUvarint(b, uint64(v.Len()))
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
			b = appendString(appendString(b, k), m[k])
		}
		return b, nil
	case v.Type() == resourceType && v.CanInterface():
		m := v.Interface().(corev1.ResourceList)
		var small [16]corev1.ResourceName
		keys := small[:0]
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			q := m[k]
			b = appendQuantity(appendString(b, string(k)), &q)
		}
		return b, nil
	case v.Type() == anyMapType && v.CanInterface():
		return appendAnyMap(b, v.Interface().(map[string]any), depth)
	case v.Type().Key().Kind() != reflect.String:
		return b, fmt.Errorf("cannot hash a %s: its keys are not strings", v.Type())
	}
	keys := v.MapKeys()
	slices.SortFunc(keys, func(x, y reflect.Value) int { return strings.Compare(x.String(), y.String()) })
	var err error
	for _, k := range keys {
		if b, err = appendValue(appendString(b, k.String()), v.MapIndex(k), depth+1); err != nil {
			return b, err
		}
	}
	return b, nil
}

// appendAnyMap appends an unstructured object's map, without reflection
// for the JSON types.
func appendAnyMap(b []byte, m map[string]any, depth int) ([]byte, error) {
	var small [16]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var err error
	for _, k := range keys {
		if b, err = appendJSON(appendString(b, k), m[k], depth+1); err != nil {
			return b, err
		}
	}
	return b, nil
}

func appendJSON(b []byte, x any, depth int) ([]byte, error) {
	if depth > maxDepth {
		return b, errTooDeep()
	}
	switch val := x.(type) {
	case string:
		return appendString(append(b, 's'), val), nil
	case map[string]any:
		if val == nil {
			return append(b, 'm', 0), nil
		}
		b = binary.AppendUvarint(append(b, 'm', 1), uint64(len(val)))
		return appendAnyMap(b, val, depth)
	case []any:
		if val == nil {
			return append(b, 'l', 0), nil
		}
		b = binary.AppendUvarint(append(b, 'l', 1), uint64(len(val)))
		var err error
		for _, item := range val {
			if b, err = appendJSON(b, item, depth+1); err != nil {
				return b, err
			}
		}
		return b, nil
	case bool:
		return appendBool(append(b, 'b'), val), nil
	case int64:
		return binary.AppendUvarint(append(b, 'i'), uint64(val)), nil
	case float64:
		return binary.AppendUvarint(append(b, 'f'), math.Float64bits(val)), nil
	case nil:
		return append(b, 'n'), nil
	default:
		return appendAny(append(b, 'r'), reflect.ValueOf(x), depth+1)
	}
}
