package apply

import (
	"container/list"
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
	intent          [32]byte // hash of the intent as sent
	// fields fingerprints the fields our managedFields entry owned after
	// the apply, as the cache shows them (zero until the cache has shown
	// our write): see [ownFields].
	fields [32]byte
	// controller is the UID of the object's controller after the apply.
	controller types.UID
	// disputed marks an object that an apply took over by accident and
	// whose controller reference could not be removed again yet.
	disputed bool
}

// records is a bounded LRU map from object key to record.
type records struct {
	mu    sync.Mutex
	max   int
	order *list.List // front = most recent; values are keys
	items map[recordKey]*list.Element
	recs  map[recordKey]record
}

func newRecords(maxEntries int) *records {
	return &records{max: maxEntries, order: list.New(), items: map[recordKey]*list.Element{}, recs: map[recordKey]record{}}
}

func (r *records) get(key recordKey) (record, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.recs[key]
	if ok {
		r.order.MoveToFront(r.items[key])
	}
	return rec, ok
}

func (r *records) put(key recordKey, rec record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if el, ok := r.items[key]; ok {
		r.order.MoveToFront(el)
	} else {
		r.items[key] = r.order.PushFront(key)
	}
	r.recs[key] = rec
	for r.order.Len() > r.max {
		oldest := r.order.Back()
		k := oldest.Value.(recordKey)
		r.order.Remove(oldest)
		delete(r.items, k)
		delete(r.recs, k)
	}
}

func (r *records) forget(key recordKey) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if el, ok := r.items[key]; ok {
		r.order.Remove(el)
		delete(r.items, key)
		delete(r.recs, key)
	}
}

func (r *records) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.recs)
}
