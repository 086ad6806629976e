// Package recency keeps elements in order of last use, linked through
// fields of their own, so that an element costs no list node beside it
// (container/list allocates one per element, with its value boxed in an
// interface). apply's records of its last applies and the event
// recorder's series use it: both forget from the old end.
package recency

// Links are the fields an element keeps its neighbours in. An element
// embeds them, or holds them in a field, and returns them from
// RecencyLinks.
type Links[E any] struct {
	newer, older E
	linked       bool
}

// Element is what a List holds: a pointer type whose Links the List uses.
type Element[E any] interface {
	comparable
	RecencyLinks() *Links[E]
}

// List orders elements from the newest (the last touched) to the oldest.
// The zero List is empty and ready to use. It is not safe for concurrent
// use.
type List[E Element[E]] struct {
	newest, oldest E
}

// Touch makes e, in the list or not, the newest element.
func (l *List[E]) Touch(e E) {
	if l.newest == e {
		return
	}
	l.Remove(e)
	links := e.RecencyLinks()
	links.older, links.linked = l.newest, true
	var none E
	if l.newest != none {
		l.newest.RecencyLinks().newer = e
	}
	l.newest = e
	if l.oldest == none {
		l.oldest = e
	}
}

// Remove takes e out of the list; a no-op when it is not in it.
func (l *List[E]) Remove(e E) {
	links := e.RecencyLinks()
	if !links.linked {
		return
	}
	var none E
	if links.newer != none {
		links.newer.RecencyLinks().older = links.older
	} else {
		l.newest = links.older
	}
	if links.older != none {
		links.older.RecencyLinks().newer = links.newer
	} else {
		l.oldest = links.newer
	}
	*links = Links[E]{}
}

// Oldest returns the least recently touched element, the zero E when the
// list is empty.
func (l *List[E]) Oldest() E { return l.oldest }

// Newer returns the element touched after e, the zero E for the newest.
// Take it before removing e.
func Newer[E Element[E]](e E) E { return e.RecencyLinks().newer }
