package watch

import "sync"

// coalescer is the buffer between the informer and a slow consumer. It
// holds at most one pending value per object key (a newer value replaces the
// older one in place), so its memory is bounded by the number of distinct
// objects, never by the rate of change. Keys leave in the order they first
// became pending.
type coalescer[V any] struct {
	mu      sync.Mutex
	pending map[string]V
	order   []string
	ready   chan struct{} // capacity 1: "something is pending"
}

func newCoalescer[V any]() *coalescer[V] {
	return &coalescer[V]{pending: map[string]V{}, ready: make(chan struct{}, 1)}
}

// push records v as the latest value for key. It never blocks.
func (c *coalescer[V]) push(key string, v V) {
	c.mu.Lock()
	if _, ok := c.pending[key]; !ok {
		c.order = append(c.order, key)
	}
	c.pending[key] = v
	c.mu.Unlock()
	select {
	case c.ready <- struct{}{}:
	default:
	}
}

// pop takes the oldest pending key's latest value.
func (c *coalescer[V]) pop() (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var zero V
	if len(c.order) == 0 {
		return zero, false
	}
	key := c.order[0]
	c.order[0] = ""
	c.order = c.order[1:]
	if len(c.order) == 0 {
		c.order = nil // let the backing array go
	}
	v := c.pending[key]
	delete(c.pending, key)
	return v, true
}

// len reports how many keys are pending.
func (c *coalescer[V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.order)
}

// forget drops a pending value for key, if any.
func (c *coalescer[V]) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.pending[key]; !ok {
		return
	}
	delete(c.pending, key)
	for i, k := range c.order {
		if k == key {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
}
