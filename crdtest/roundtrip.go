package crdtest

import (
	"fmt"
	"math/rand"
	"reflect"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/resource"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/randfill"
)

// DefaultIterations is the number of round trips per direction and spoke
// that [CheckRoundTrip] runs unless told otherwise.
const DefaultIterations = 10000

// RoundTripOptions configure [CheckRoundTrip].
type RoundTripOptions struct {
	// Iterations is the number of fuzzed objects per direction and spoke.
	// Default [DefaultIterations].
	Iterations int
	// Seed seeds the fuzzer; the same seed fills the same objects, so a
	// failure names the seed that reproduces it. Default 1.
	Seed int64
	// FillFuncs are randfill custom functions, func(*T, randfill.Continue),
	// for fields whose random values the API could never hold (a string
	// that must parse, a union with one member set). They override
	// apimachinery's functions for ObjectMeta and TypeMeta, which are
	// always used.
	FillFuncs []any
	// IgnoreAnnotations are annotation keys that a conversion may add (the
	// annotation that keeps what the other version cannot hold, as
	// cluster-api does): removed from the converted object before it is
	// compared, unless the original had them.
	IgnoreAnnotations []string
	// CmpOptions are more go-cmp options for the comparison.
	CmpOptions []cmp.Option
}

// RoundTripOption is an option of [CheckRoundTrip].
type RoundTripOption interface {
	// ApplyToRoundTripOptions applies this option to o.
	ApplyToRoundTripOptions(o *RoundTripOptions)
}

// ApplyToRoundTripOptions copies the set fields of o into target, so that
// a RoundTripOptions is an option too.
func (o RoundTripOptions) ApplyToRoundTripOptions(target *RoundTripOptions) {
	if o.Iterations != 0 {
		target.Iterations = o.Iterations
	}
	if o.Seed != 0 {
		target.Seed = o.Seed
	}
	target.FillFuncs = append(target.FillFuncs, o.FillFuncs...)
	target.IgnoreAnnotations = append(target.IgnoreAnnotations, o.IgnoreAnnotations...)
	target.CmpOptions = append(target.CmpOptions, o.CmpOptions...)
}

// Iterations is the number of fuzzed objects per direction and spoke.
type Iterations int

// ApplyToRoundTripOptions sets o.Iterations.
func (n Iterations) ApplyToRoundTripOptions(o *RoundTripOptions) { o.Iterations = int(n) }

// Seed seeds the fuzzer.
type Seed int64

// ApplyToRoundTripOptions sets o.Seed.
func (s Seed) ApplyToRoundTripOptions(o *RoundTripOptions) { o.Seed = int64(s) }

// IgnoreAnnotations are annotation keys a conversion may add.
type IgnoreAnnotations []string

// ApplyToRoundTripOptions adds to o.IgnoreAnnotations.
func (a IgnoreAnnotations) ApplyToRoundTripOptions(o *RoundTripOptions) {
	o.IgnoreAnnotations = append(o.IgnoreAnnotations, a...)
}

// FillFuncs are randfill custom functions, func(*T, randfill.Continue).
type FillFuncs []any

// ApplyToRoundTripOptions adds to o.FillFuncs.
func (f FillFuncs) ApplyToRoundTripOptions(o *RoundTripOptions) {
	o.FillFuncs = append(o.FillFuncs, f...)
}

// TB is the part of testing.TB that [CheckRoundTrip] uses.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
}

// CheckRoundTrip checks that converting between hub and each spoke loses
// nothing, for controller-runtime's hub-and-spoke conversion (what its
// conversion webhook calls). For every spoke, and opts' Iterations times
// with a seeded fuzzer, both ways:
//
//   - spoke -> hub -> spoke: a fuzzed spoke is converted to the hub
//     (ConvertTo) and back (ConvertFrom), and must come back equal;
//   - hub -> spoke -> hub: a fuzzed hub is converted to the spoke
//     (ConvertFrom) and back (ConvertTo), and must come back equal, which
//     holds only if the spoke keeps what it cannot hold (in an
//     annotation, as cluster-api does) and the hub restores it.
//
// hub and spokes are only used for their types: fresh objects of those
// types are filled. TypeMeta is not compared (it is blank in memory, and
// set by the conversion webhook). The comparison is go-cmp's, with nil and
// empty slices and maps equal, resource.Quantity and metav1.Time compared
// by value, and unexported fields compared. For each direction and spoke,
// the first loss fails t with its field path, the iteration and seed that
// reproduce it, and a -want +got diff; the other iterations of that
// direction are skipped.
func CheckRoundTrip(t TB, hub conversion.Hub, spokes []conversion.Convertible, opts ...RoundTripOption) {
	t.Helper()
	o := RoundTripOptions{Iterations: DefaultIterations, Seed: 1}
	for _, opt := range opts {
		opt.ApplyToRoundTripOptions(&o)
	}
	cmpOpts := append([]cmp.Option{
		cmpopts.EquateEmpty(),
		cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 }),
		cmp.Comparer(func(a, b metav1.Time) bool { return a.Equal(&b) }),
		cmp.Exporter(func(reflect.Type) bool { return true }),
	}, o.CmpOptions...)
	for _, spoke := range spokes {
		spokeName, hubName := typeName(spoke), typeName(hub)
		f := newFiller(o)
		for i := range o.Iterations {
			in := newLike(spoke)
			f.Fill(in)
			clearTypeMeta(in)
			mid, out := newLike(hub), newLike(spoke)
			if err := in.ConvertTo(mid); err != nil {
				t.Errorf("%s -> %s: iteration %d (seed %d): convert: %v", spokeName, hubName, i, o.Seed, err)
				break
			}
			if err := out.ConvertFrom(mid); err != nil {
				t.Errorf("%s -> %s -> %s: iteration %d (seed %d): convert back: %v", spokeName, hubName, spokeName, i, o.Seed, err)
				break
			}
			if lost(t, fmt.Sprintf("%s -> %s -> %s", spokeName, hubName, spokeName), i, o, in, out, cmpOpts) {
				break
			}
		}
		f = newFiller(o)
		for i := range o.Iterations {
			in := newLike(hub)
			f.Fill(in)
			clearTypeMeta(in)
			mid, out := newLike(spoke), newLike(hub)
			if err := mid.ConvertFrom(in); err != nil {
				t.Errorf("%s -> %s: iteration %d (seed %d): convert: %v", hubName, spokeName, i, o.Seed, err)
				break
			}
			if err := mid.ConvertTo(out); err != nil {
				t.Errorf("%s -> %s -> %s: iteration %d (seed %d): convert back: %v", hubName, spokeName, hubName, i, o.Seed, err)
				break
			}
			if lost(t, fmt.Sprintf("%s -> %s -> %s", hubName, spokeName, hubName), i, o, in, out, cmpOpts) {
				break
			}
		}
	}
}

// lost reports whether out differs from in, failing t if it does.
func lost(t TB, way string, i int, o RoundTripOptions, in, out runtime.Object, cmpOpts []cmp.Option) bool {
	t.Helper()
	clearTypeMeta(out)
	dropAddedAnnotations(in, out, o.IgnoreAnnotations)
	var r firstDiff
	if cmp.Equal(in, out, append(cmpOpts, cmp.Reporter(&r))...) {
		return false
	}
	t.Errorf("%s: iteration %d (seed %d): %s lost in the round trip (-want +got):\n%s", way, i, o.Seed, r.path, cmp.Diff(in, out, cmpOpts...))
	return true
}

// firstDiff is a go-cmp reporter that records the path of the first
// difference.
type firstDiff struct {
	steps cmp.Path
	path  string
}

func (r *firstDiff) PushStep(ps cmp.PathStep) { r.steps = append(r.steps, ps) }
func (r *firstDiff) PopStep()                 { r.steps = r.steps[:len(r.steps)-1] }

func (r *firstDiff) Report(rs cmp.Result) {
	if !rs.Equal() && r.path == "" {
		r.path = fieldPath(r.steps)
	}
}

// fieldPath is a go-cmp path as a Go expression from the object, such as
// Spec.Ports[0].Name or ObjectMeta.Annotations["a"].
func fieldPath(p cmp.Path) string {
	s := ""
	for _, step := range p {
		switch step := step.(type) {
		case cmp.StructField:
			if s != "" {
				s += "."
			}
			s += step.Name()
		case cmp.SliceIndex, cmp.MapIndex:
			s += step.String()
		}
	}
	if s == "" {
		return "the object"
	}
	return s
}

func newFiller(o RoundTripOptions) *randfill.Filler {
	funcs := metafuzzer.Funcs(serializer.NewCodecFactory(runtime.NewScheme()))
	return randfill.New().
		RandSource(rand.NewSource(o.Seed)). //nolint:gosec // a test fuzzer's reproducible source
		NilChance(0.2).
		NumElements(0, 3).
		Funcs(append(funcs, o.FillFuncs...)...)
}

// newLike returns a new zero object of obj's type.
func newLike[T runtime.Object](obj T) T {
	return reflect.New(reflect.TypeOf(obj).Elem()).Interface().(T)
}

func typeName(obj runtime.Object) string {
	t := reflect.TypeOf(obj).Elem()
	return t.String()
}

func clearTypeMeta(obj runtime.Object) {
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
}

// dropAddedAnnotations removes from out the ignored annotations that in
// does not have.
func dropAddedAnnotations(in, out runtime.Object, keys []string) {
	if len(keys) == 0 {
		return
	}
	inMeta, ok1 := in.(metav1.Object)
	outMeta, ok2 := out.(metav1.Object)
	if !ok1 || !ok2 {
		return
	}
	annotations := outMeta.GetAnnotations()
	for _, k := range keys {
		if _, had := inMeta.GetAnnotations()[k]; !had {
			delete(annotations, k)
		}
	}
	if len(annotations) == 0 {
		annotations = nil
	}
	outMeta.SetAnnotations(annotations)
}
