package main

import (
	"context"
	"fmt"
	"sync"

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

	mu        sync.Mutex
	ready     map[string]bool
	children  map[string]map[string]bool // kind -> names
	converged chan struct{}
	pending   map[string]*pendingChange
}

type pendingChange struct {
	want string
	seen map[string]bool
	done chan struct{}
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
		o.ready[x.Name] = c != nil && c.Status == metav1.ConditionTrue && x.Status.ObservedGeneration == x.Generation
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
	ready := 0
	for _, r := range o.ready {
		if r {
			ready++
		}
	}
	if ready < o.n {
		return
	}
	for _, k := range childKinds {
		if len(o.children[k]) < o.n {
			return
		}
	}
	close(o.converged)
}

// expect registers that the children of Widget name will carry want; the
// channel closes when all three do.
func (o *observer) expect(name, want string) <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	p := &pendingChange{want: want, seen: map[string]bool{}, done: make(chan struct{})}
	o.pending[name] = p
	return p.done
}
