package apply

import (
	"hash/maphash"
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
	uid             uid
	resourceVersion string
	intent          digest // hash of the intent as sent
	// fields fingerprints the fields our managedFields entry owned after
	// the apply, as the cache shows them (zero until the cache has shown
	// our write): see [ownFields].
	fields digest
	// controller is the UID of the object's controller after the apply.
	controller uid
	// disputed is the UID of an object that an apply took over by
	// accident and whose controller reference could not be removed again
	// yet; empty for any other.
	disputed types.UID
}

// uid is a UID as a record keeps it: the 16 bytes of the UUID the API
// server assigns (its 36 characters would take a string of 48 bytes on the
// heap, for each of the two a record holds), or for a UID of another form
// (a fake client's, a test's) the first 16 bytes of its SHA-256. Records
// only compare UIDs; the zero uid is the empty UID.
type uid [16]byte

// uidOf returns u as a record keeps it.
func uidOf(u types.UID) uid {
	if u == "" {
		return uid{}
	}
	if b, ok := parseUUID(string(u)); ok {
		return b
	}
	return uid(digestOf([]byte(u)))
}

// parseUUID parses the canonical form of a UUID the API server writes
// (lower-case hexadecimal, hyphens after the 8th, 12th, 16th and 20th
// digit); any other form is refused, so that two different strings never
// give the same bytes.
func parseUUID(s string) (uid, bool) {
	var out uid
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return out, false
	}
	j := 0
	for i := 0; i < len(s); i += 2 {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			i++
		}
		hi, ok1 := hexDigit(s[i])
		lo, ok2 := hexDigit(s[i+1])
		if !ok1 || !ok2 {
			return out, false
		}
		out[j] = hi<<4 | lo
		j++
	}
	return out, true
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// records is a bounded LRU map from object key to record: one map, keyed
// by a 64-bit hash of the key, whose entries are linked in recency order.
// A record takes some 130 bytes (an entry of 112 and its slot in the map),
// where keeping the key itself in the map and the entry took 276: heap per
// parent counts them, three per parent in the bench.
//
// Two keys whose hashes collide (a chance of about 1 in 2^64 per pair)
// share an entry, and that is safe: each record's intent digest covers the
// object's name, namespace and kind, and its UID the object, so a record
// read for the other object proves nothing about it; it costs that object
// an apply, and the entry is replaced.
type records struct {
	mu    sync.Mutex
	max   int
	seed  maphash.Seed
	items map[uint64]*entry
	order recency.List[*entry]
}

// entry is one object's record in the recency order.
type entry struct {
	key   uint64
	rec   record
	links recency.Links[*entry]
}

// RecencyLinks implements recency.Element.
func (e *entry) RecencyLinks() *recency.Links[*entry] { return &e.links }

func newRecords(maxEntries int) *records {
	return &records{max: maxEntries, seed: maphash.MakeSeed(), items: map[uint64]*entry{}}
}

func (r *records) hash(key recordKey) uint64 { return maphash.Comparable(r.seed, key) }

func (r *records) get(key recordKey) (record, bool) {
	h := r.hash(key)
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.items[h]
	if !ok {
		return record{}, false
	}
	r.order.Touch(e)
	return e.rec, true
}

func (r *records) put(key recordKey, rec record) {
	h := r.hash(key)
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.items[h]
	if ok {
		e.rec = rec
	} else {
		e = &entry{key: h, rec: rec}
		r.items[h] = e
	}
	r.order.Touch(e)
	for len(r.items) > r.max {
		oldest := r.order.Oldest()
		r.order.Remove(oldest)
		delete(r.items, oldest.key)
	}
}

func (r *records) forget(key recordKey) {
	h := r.hash(key)
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.items[h]; ok {
		r.order.Remove(e)
		delete(r.items, h)
	}
}

func (r *records) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.items)
}
