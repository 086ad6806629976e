package apply

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
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
	// head is the most recently used entry, tail the least; nil when empty.
	head, tail *entry
}

// entry is one object's record in the recency list.
type entry struct {
	key        recordKey
	rec        record
	prev, next *entry // prev: more recent
}

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
	r.toFront(e)
	return e.rec, true
}

func (r *records) put(key recordKey, rec record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.items[key]; ok {
		e.rec = rec
		r.toFront(e)
		return
	}
	e := &entry{key: key, rec: rec}
	r.items[key] = e
	r.toFront(e)
	for len(r.items) > r.max {
		oldest := r.tail
		r.unlink(oldest)
		delete(r.items, oldest.key)
	}
}

func (r *records) forget(key recordKey) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.items[key]; ok {
		r.unlink(e)
		delete(r.items, key)
	}
}

func (r *records) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.items)
}

// toFront makes e, linked or not, the most recently used entry.
func (r *records) toFront(e *entry) {
	if r.head == e {
		return
	}
	r.unlink(e)
	e.next = r.head
	if r.head != nil {
		r.head.prev = e
	}
	r.head = e
	if r.tail == nil {
		r.tail = e
	}
}

// unlink takes e out of the recency list (a no-op for an unlinked entry).
func (r *records) unlink(e *entry) {
	switch {
	case e.prev != nil:
		e.prev.next = e.next
	case r.head == e:
		r.head = e.next
	default:
		return // not linked
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		r.tail = e.prev
	}
	e.prev, e.next = nil, nil
}
