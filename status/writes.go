package status

import (
	"container/list"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// maxWrites bounds how many objects the process remembers its last status
// write for. Forgetting one only makes [Patcher.Patch] trust the snapshot,
// as it would without the memory.
const maxWrites = 10000

// maxOlder bounds lastWrite.older.
const maxOlder = 4

// lastWrite is what this process last applied to one object's status.
type lastWrite struct {
	uid             types.UID
	resourceVersion string // returned by the API server for the write
	// older are resourceVersions known to predate this write: the one it
	// was based on (the object as read), and this process' earlier writes
	// of the object with theirs, the last [maxOlder].
	older  []string
	status any // the status sent, as unstructured data
}

// writeLog is a bounded LRU map from UID to the object's last status write,
// shared by every Patcher of the process (UIDs are unique across clusters
// for practical purposes, so one log serves any number of clients).
type writeLog struct {
	mu    sync.Mutex
	max   int
	order *list.List // front = most recent; values are lastWrite
	items map[types.UID]*list.Element
}

var writes = newWriteLog(maxWrites)

func newWriteLog(maxEntries int) *writeLog {
	return &writeLog{max: maxEntries, order: list.New(), items: map[types.UID]*list.Element{}}
}

func (l *writeLog) get(uid types.UID) (lastWrite, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	el, ok := l.items[uid]
	if !ok {
		return lastWrite{}, false
	}
	return el.Value.(lastWrite), true
}

func (l *writeLog) put(w lastWrite) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if el, ok := l.items[w.uid]; ok {
		el.Value = w
		l.order.MoveToFront(el)
		return
	}
	l.items[w.uid] = l.order.PushFront(w)
	for l.order.Len() > l.max {
		oldest := l.order.Back()
		l.order.Remove(oldest)
		delete(l.items, oldest.Value.(lastWrite).uid)
	}
}

func (l *writeLog) forget(uid types.UID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if el, ok := l.items[uid]; ok {
		l.order.Remove(el)
		delete(l.items, uid)
	}
}

func (l *writeLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.items)
}
