package main

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/test/widget"
)

// Heap per parent.
//
// An earlier method read the live heap with a manager running, stopped the
// manager and read it again: the difference was what stopping freed. It
// gave D 9.5 KiB per parent in one run and 2.7 in another, and E 2.7
// against 12.9: anything that kept the stopped manager reachable (the
// event recorder's worker goroutine, which held the manager's client and
// through it the cache, started by the first event and ran until
// Shutdown, which nobody called for a recorder made by Builder.Setup)
// left the cache in the second reading, and whether it ran depended on
// whether the variant had recorded an event (D records one only on a
// failure, which a loaded machine makes more likely). The figure was a
// difference of what happened to be freed, not of what was held.
//
// This method measures what a manager holds, not what stopping frees:
//
//   - the live heap (two runtime.GC, then HeapAlloc) before the manager
//     starts, and again once it has synced its cache, reconciled every
//     parent of the converged namespace and is idle: the growth;
//   - the same for the same controller on an empty namespace: the fixed
//     cost (its informers, REST mapper, clients, queue), taken off so that
//     the figure is per parent at any N;
//   - repeated on freshly started managers (-heap-repeats per round), the
//     spread reported;
//   - after each stop, what the process kept of it (retained): more than a
//     few per cent of the growth means something outlives the manager, and
//     says so instead of hiding in the figure;
//   - a cross-check against the cache itself: the objects it holds
//     (counted per kind: N of each) and what fresh copies of them take on
//     the heap (decoded from their JSON with the same two-GC reading), so
//     the rest (informer indexes and keys, the controller's own records)
//     is visible.

// heapSample is one round's heap figures of one variant, in bytes.
type heapSample struct {
	// perParent are the full readings, each (growth - fixed) / N.
	perParent []float64
	// stripped is the same with managedFields stripped from the cache.
	stripped float64
	// fixed is the controller's growth on an empty namespace.
	fixed float64
	// retained is the largest growth left after a manager stopped, per
	// parent.
	retained float64
	cache    cacheCheck
}

// cacheCheck is what a manager's cache held when its heap was read.
type cacheCheck struct {
	objects   map[string]int // per kind
	jsonBytes int64          // the objects as JSON
	decoded   int64          // the heap that fresh copies of them take
}

// heapInUse returns the live heap after two garbage collections.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// measureHeap takes the heap readings of variant v on the converged
// namespace ns of n parents.
func (e *env) measureHeap(ctx context.Context, v variant, ns string, n int) (heapSample, error) {
	var h heapSample
	empty := ns + "-empty"
	if err := e.admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: empty}}); err != nil {
		return h, err
	}
	defer e.cleanup(empty)
	fixed, _, err := e.heapOf(ctx, v, empty, 0, false, nil)
	if err != nil {
		return h, err
	}
	h.fixed = float64(fixed)
	for i := range max(e.o.heapRepeats, 1) {
		var check *cacheCheck
		if i == 0 {
			check = &h.cache
		}
		grown, retained, err := e.heapOf(ctx, v, ns, n, false, check)
		if err != nil {
			return h, err
		}
		h.perParent = append(h.perParent, (float64(grown)-h.fixed)/float64(n))
		h.retained = max(h.retained, float64(retained)/float64(n))
	}
	grown, _, err := e.heapOf(ctx, v, ns, n, true, nil)
	if err != nil {
		return h, err
	}
	h.stripped = (float64(grown) - h.fixed) / float64(n)
	if e.o.verbose {
		logf("%s heap per parent %v, stripped %.0f, fixed %.0f, retained %.0f per parent; cache %v, %d bytes JSON, %d decoded",
			v.key, h.perParent, h.stripped, h.fixed, h.retained, h.cache.objects, h.cache.jsonBytes, h.cache.decoded)
	}
	return h, nil
}

// heapOf starts a manager of v on ns, waits until it has reconciled n
// parents and is idle, and returns how much the live heap grew, and how
// much of that the process still held after the manager stopped. check,
// if not nil, receives what the cache held.
func (e *env) heapOf(ctx context.Context, v variant, ns string, n int, strip bool, check *cacheCheck) (grown, retained int64, err error) {
	before := heapInUse()
	m, err := e.startManager(ctx, ns, strip, v, fmt.Sprintf("%s-heap-%d", ns, time.Now().UnixNano()))
	if err != nil {
		return 0, 0, err
	}
	if !m.mgr.GetCache().WaitForCacheSync(ctx) {
		m.stop()
		return 0, 0, fmt.Errorf("cache of %s did not sync", ns)
	}
	if _, err := m.act.waitQuiet(ctx, n); err != nil {
		m.stop()
		return 0, 0, err
	}
	running := heapInUse()
	if check != nil && n > 0 && !strip && e.o.profile != "" {
		// What the manager holds, by allocation site (go tool pprof
		// -sample_index=inuse_space; -base another variant's to compare).
		if err := writeHeapProfile(e.o.profile, fmt.Sprintf("%s-%d", v.key, n)); err != nil {
			logf("heap profile: %v", err)
		}
	}
	if check != nil {
		if *check, err = checkCache(ctx, m.mgr.GetCache(), ns); err != nil {
			m.stop()
			return 0, 0, err
		}
	}
	m.stop()
	m = nil //nolint:wastedassign // the stopped manager must be unreachable for the last reading
	after := heapInUse()
	return int64(running) - int64(before), int64(after) - int64(before), nil
}

// checkCache counts the objects of the workload's kinds in c, and
// measures what fresh copies of them take on the heap: each object's JSON
// decoded into a new object of its type, between two heap readings.
func checkCache(ctx context.Context, c client.Reader, ns string) (cacheCheck, error) {
	out := cacheCheck{objects: map[string]int{}}
	raws, types, err := cachedJSON(ctx, c, ns, &out)
	if err != nil {
		return out, err
	}
	// The lists read from the cache are unreachable now (cachedJSON
	// returned): neither reading counts them.
	copies := make([]any, len(raws))
	before := heapInUse()
	for i, b := range raws {
		obj := reflect.New(types[i]).Interface()
		if err := json.Unmarshal(b, obj); err != nil {
			return out, err
		}
		copies[i] = obj
	}
	out.decoded = int64(heapInUse()) - int64(before)
	// raws and types were in the first reading: keep them in the second.
	runtime.KeepAlive(copies)
	runtime.KeepAlive(raws)
	runtime.KeepAlive(types)
	return out, nil
}

// cachedJSON lists the workload's kinds from c and returns each object as
// JSON with its Go type, counting them in out.
func cachedJSON(ctx context.Context, c client.Reader, ns string, out *cacheCheck) ([][]byte, []reflect.Type, error) {
	var raws [][]byte
	var types []reflect.Type
	for _, l := range []client.ObjectList{&widget.WidgetList{}, &corev1.ConfigMapList{}, &corev1.SecretList{}, &corev1.ServiceList{}} {
		if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
			return nil, nil, err
		}
		items, err := apimeta.ExtractList(l)
		if err != nil {
			return nil, nil, err
		}
		kind := reflect.TypeOf(l).Elem().Name()
		out.objects[strings.TrimSuffix(kind, "List")] = len(items)
		for _, it := range items {
			b, err := json.Marshal(it)
			if err != nil {
				return nil, nil, err
			}
			raws = append(raws, b)
			types = append(types, reflect.TypeOf(it).Elem())
			out.jsonBytes += int64(len(b))
		}
	}
	return raws, types, nil
}
