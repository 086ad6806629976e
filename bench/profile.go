package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// profileEntry is one function of a profile summary and its share.
type profileEntry struct {
	function string
	share    float64 // of the profile's total, 0 to 1
}

// runtimeFrame reports whether a function is the runtime's (allocation,
// garbage collection, maps, scheduling): its samples are charged to the
// nearest caller that is not, the code that made the work.
func runtimeFrame(fn string) bool {
	for _, p := range []string{"runtime.", "internal/", "sync.", "sync/atomic.", "aeshash", "memeqbody", "indexbytebody", "cmpbody", "gcWriteBarrier", "type:.", "memhash",
		"reflect.unsafe_", "reflect.typedmemmove", "reflect.mapassign", "reflect.mapaccess", "reflect.growslice"} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

// topOf summarises a profile (less base, if given) by function: each
// sample is charged to the innermost frame that is not the runtime's
// (runtimeFrame), so a function's figure includes the allocation and
// garbage-collection work it caused; samples with no such frame (the
// garbage collector's own workers, the scheduler) are "runtime (GC,
// scheduler)". It returns the n functions with the largest share of the
// sample type named typ.
func topOf(raw, base []byte, typ string, n int) ([]profileEntry, error) {
	p, err := profile.Parse(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	if base != nil {
		b, err := profile.Parse(bytes.NewReader(base))
		if err != nil {
			return nil, err
		}
		b.Scale(-1)
		if p, err = profile.Merge([]*profile.Profile{b, p}); err != nil {
			return nil, err
		}
	}
	idx := slices.IndexFunc(p.SampleType, func(st *profile.ValueType) bool { return st.Type == typ })
	if idx < 0 && typ == "cpu" {
		idx = len(p.SampleType) - 1
	}
	if idx < 0 {
		return nil, fmt.Errorf("no sample type %q", typ)
	}
	charged := map[string]int64{}
	var total int64
	for _, s := range p.Sample {
		v := s.Value[idx]
		if v <= 0 {
			continue
		}
		total += v
		fn := "runtime (GC, scheduler)"
	frames:
		for _, loc := range s.Location {
			// Lines are innermost first: inlined calls before their caller.
			for _, l := range loc.Line {
				if l.Function != nil && !runtimeFrame(l.Function.Name) {
					fn = l.Function.Name
					break frames
				}
			}
		}
		charged[fn] += v
	}
	if total == 0 {
		return nil, nil
	}
	out := make([]profileEntry, 0, len(charged))
	for fn, v := range charged {
		out = append(out, profileEntry{function: shortName(fn), share: float64(v) / float64(total)})
	}
	slices.SortFunc(out, func(a, b profileEntry) int {
		switch {
		case a.share > b.share:
			return -1
		case a.share < b.share:
			return 1
		}
		return strings.Compare(a.function, b.function)
	})
	return out[:min(n, len(out))], nil
}

// shortName drops the module prefixes everybody knows from a function
// name, and generic shape noise.
func shortName(fn string) string {
	for _, p := range []string{"github.com/kopgo/kopgo/", "sigs.k8s.io/controller-runtime/pkg/", "k8s.io/apimachinery/pkg/", "k8s.io/client-go/"} {
		fn = strings.TrimPrefix(fn, p)
	}
	return strings.ReplaceAll(fn, "[go.shape.*uint8]", "[…]")
}
