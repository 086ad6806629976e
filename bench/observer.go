package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/test/widget"
)

// observer watches one namespace with its own (admin, uncounted) cache and
// tells when every Widget is Ready with all three children, and when the
// children of one Widget carry a given value.
type observer struct {
	n     int
	cache cache.Cache
	stop  context.CancelFunc

	mu         sync.Mutex
	ready      map[string]bool
	readyCount int
	children   map[string]map[string]bool // kind -> names
	converged  chan struct{}
	pending    map[string]*pendingChange
}

type pendingChange struct {
	want string
	gen  int64 // the Widget's generation after the change
	seen map[string]bool
	done chan struct{}
	// parentSeen is when the watch saw the Widget at gen, childrenSeen
	// when it saw the last of the three children carry want.
	parentSeen, childrenSeen time.Time
}

var childKinds = []string{"ConfigMap", "Secret", "Service"}

func kindOf(obj client.Object) string {
	switch obj.(type) {
	case *corev1.ConfigMap:
		return "ConfigMap"
	case *corev1.Secret:
		return "Secret"
	case *corev1.Service:
		return "Service"
	}
	return ""
}

func startObserver(ctx context.Context, cfg *rest.Config, ns string, n int) (*observer, error) {
	c, err := cache.New(cfg, cache.Options{Scheme: widget.Scheme(), DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		return nil, err
	}
	o := &observer{n: n, cache: c, ready: map[string]bool{}, children: map[string]map[string]bool{},
		converged: make(chan struct{}), pending: map[string]*pendingChange{}}
	for _, k := range childKinds {
		o.children[k] = map[string]bool{}
	}
	ctx, cancel := context.WithCancel(ctx)
	o.stop = cancel
	for _, obj := range []client.Object{&widget.Widget{}, &corev1.ConfigMap{}, &corev1.Secret{}, &corev1.Service{}} {
		inf, err := c.GetInformer(ctx, obj)
		if err != nil {
			cancel()
			return nil, err
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { o.seen(obj) },
			UpdateFunc: func(_, obj any) { o.seen(obj) },
		}); err != nil {
			cancel()
			return nil, err
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		cancel()
		return nil, fmt.Errorf("observer cache of %s did not sync", ns)
	}
	return o, nil
}

func (o *observer) seen(obj any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch x := obj.(type) {
	case *widget.Widget:
		c := apimeta.FindStatusCondition(x.Status.Conditions, "Ready")
		ready := c != nil && c.Status == metav1.ConditionTrue && x.Status.ObservedGeneration == x.Generation
		if ready != o.ready[x.Name] {
			o.ready[x.Name] = ready
			if ready {
				o.readyCount++
			} else {
				o.readyCount--
			}
		}
		if p := o.pending[x.Name]; p != nil && p.parentSeen.IsZero() && x.Generation >= p.gen {
			p.parentSeen = time.Now()
		}
	case client.Object:
		k := kindOf(x)
		if k == "" {
			return
		}
		o.children[k][x.GetName()] = true
		if p := o.pending[x.GetName()]; p != nil {
			if v, ok := sizeOf(x); ok && v == p.want && !p.seen[k] {
				p.seen[k] = true
				if len(p.seen) == len(childKinds) {
					p.childrenSeen = time.Now()
					close(p.done)
					delete(o.pending, x.GetName())
				}
			}
		}
	}
	o.checkConverged()
}

func (o *observer) checkConverged() {
	select {
	case <-o.converged:
		return
	default:
	}
	// Counted as events arrive: a scan of every parent per event would
	// make the observer's own cost grow with N², in the same process as
	// the controller it times.
	if o.readyCount < o.n {
		return
	}
	for _, k := range childKinds {
		if len(o.children[k]) < o.n {
			return
		}
	}
	close(o.converged)
}

// expect registers that Widget name will be at generation gen and its
// children will carry want; done closes when all three do.
func (o *observer) expect(name string, gen int64, want string) *pendingChange {
	o.mu.Lock()
	defer o.mu.Unlock()
	p := &pendingChange{want: want, gen: gen, seen: map[string]bool{}, done: make(chan struct{})}
	o.pending[name] = p
	return p
}

// times returns when p's parent and children were seen (under the
// observer's lock: the watch sets them).
func (o *observer) times(p *pendingChange) (parent, children time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return p.parentSeen, p.childrenSeen
}
