package apply

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopgo/kopgo/internal/recency"
)

// recordKey names an object: its group, kind, namespace and name (not its
// version: all versions of an object share its resourceVersion).
type recordKey struct {
	gk              schema.GroupKind
	namespace, name string
}

// record is what the Applier remembers of its last apply to one object.
type record struct {
	uid             types.UID
	resourceVersion string
	intent          digest // hash of the intent as sent
	// fields fingerprints the fields our managedFields entry owned after
	// the apply, as the cache shows them (zero until the cache has shown
	// our write): see [ownFields].
	fields digest
	// controller is the UID of the object's controller after the apply.
	controller types.UID
	// disputed marks an object that an apply took over by accident and
	// whose controller reference could not be removed again yet.
	disputed bool
}

// records is a bounded LRU map from object key to record: one map whose
// entries are linked in recency order, so that a record costs one entry
// and no list element or boxed key beside it (a few hundred bytes per
// child object, which heap per parent counts).
type records struct {
	mu    sync.Mutex
	max   int
	items map[recordKey]*entry
	order recency.List[*entry]
}

// entry is one object's record in the recency order.
type entry struct {
	key   recordKey
	rec   record
	links recency.Links[*entry]
}

// RecencyLinks implements recency.Element.
func (e *entry) RecencyLinks() *recency.Links[*entry] { return &e.links }

func newRecords(maxEntries int) *records {
	return &records{max: maxEntries, items: map[recordKey]*entry{}}
}

func (r *records) get(key recordKey) (record, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.items[key]
	if !ok {
		return record{}, false
	}
	r.order.Touch(e)
	return e.rec, true
}

func (r *records) put(key recordKey, rec record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.items[key]
	if ok {
		e.rec = rec
	} else {
		e = &entry{key: key, rec: rec}
		r.items[key] = e
	}
	r.order.Touch(e)
	for len(r.items) > r.max {
		oldest := r.order.Oldest()
		r.order.Remove(oldest)
		delete(r.items, oldest.key)
	}
}

func (r *records) forget(key recordKey) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.items[key]; ok {
		r.order.Remove(e)
		delete(r.items, key)
	}
}

func (r *records) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.items)
}
