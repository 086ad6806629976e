package watch

import (
	"context"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apiwatch "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/scope"
)

// EventType says what happened to an object.
type EventType uint8

const (
	// Applied means the object was created or changed, or seen again when the
	// watch re-listed after a disconnect.
	Applied EventType = iota + 1
	// Deleted means the object is gone. After a disconnect the last state known
	// before it went may be all there is.
	Deleted
)

// String returns "Applied" or "Deleted".
func (t EventType) String() string {
	switch t {
	case Applied:
		return "Applied"
	case Deleted:
		return "Deleted"
	default:
		return fmt.Sprintf("EventType(%d)", t)
	}
}

// Event is one change of one object.
type Event[T client.Object] struct {
	Type   EventType
	Object T
}

// Signal sends a value whenever an object of kind T in scope s is added,
// changed or deleted. Signals coalesce: however much changes while the
// consumer is busy, one value waits. It is the cheapest watch, for "something
// changed, look again". The channel closes when ctx ends, after the watch has
// stopped.
func Signal[T client.Object](ctx context.Context, c client.WithWatch, s scope.Scope, opts ...client.ListOption) (<-chan struct{}, error) {
	q := newCoalescer[struct{}]()
	signal := func(any) { q.push("", struct{}{}) }
	return run[T](ctx, c, s, opts, q, cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { signal(obj) },
		UpdateFunc: func(_, obj any) { signal(obj) },
		DeleteFunc: signal,
	})
}

// Objects sends the current state of each object of kind T in scope s when
// it is added or changed. A slow consumer gets the latest state of each
// changed object once, not every state in between; deletions are not sent
// (use [Events]), and an object deleted while it waits is dropped.
func Objects[T client.Object](ctx context.Context, c client.WithWatch, s scope.Scope, opts ...client.ListOption) (<-chan T, error) {
	q := newCoalescer[T]()
	push := func(obj any) {
		if o, ok := obj.(T); ok {
			q.push(keyOf(o), o)
		}
	}
	return run[T](ctx, c, s, opts, q, cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { push(obj) },
		UpdateFunc: func(_, obj any) { push(obj) },
		DeleteFunc: func(obj any) {
			if o, ok := deleted[T](obj); ok {
				q.forget(keyOf(o))
			}
		},
	})
}

// Events sends Applied and Deleted events for objects of kind T in scope s.
// After a disconnect the watch re-lists: objects seen again arrive as
// Applied and objects that went away meanwhile as Deleted, so the stream
// stays consistent with the server. A slow consumer gets the latest event of
// each object, not every event in between: memory grows with the number of
// objects, never with the rate of change.
func Events[T client.Object](ctx context.Context, c client.WithWatch, s scope.Scope, opts ...client.ListOption) (<-chan Event[T], error) {
	q := newCoalescer[Event[T]]()
	applied := func(obj any) {
		if o, ok := obj.(T); ok {
			q.push(keyOf(o), Event[T]{Type: Applied, Object: o})
		}
	}
	return run[T](ctx, c, s, opts, q, cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { applied(obj) },
		UpdateFunc: func(_, obj any) { applied(obj) },
		DeleteFunc: func(obj any) {
			if o, ok := deleted[T](obj); ok {
				q.push(keyOf(o), Event[T]{Type: Deleted, Object: o})
			}
		},
	})
}

// run starts an informer for T feeding handler, and a goroutine that drains
// q into the returned channel until ctx ends.
func run[T client.Object, V any](ctx context.Context, c client.WithWatch, s scope.Scope, opts []client.ListOption,
	q *coalescer[V], handler cache.ResourceEventHandler,
) (<-chan V, error) {
	example, newList, err := kindOf[T](c, s)
	if err != nil {
		return nil, err
	}
	var o client.ListOptions
	o.ApplyOptions(opts)
	// The selectors only: the scope says the namespace, and the informer
	// pages and resumes on its own.
	listOptions := func(raw metav1.ListOptions) *client.ListOptions {
		return &client.ListOptions{Namespace: s.Namespace(), LabelSelector: o.LabelSelector, FieldSelector: o.FieldSelector, Raw: &raw}
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, raw metav1.ListOptions) (runtime.Object, error) {
			list := newList()
			return list, c.List(ctx, list, listOptions(raw))
		},
		WatchFuncWithContext: func(ctx context.Context, raw metav1.ListOptions) (apiwatch.Interface, error) {
			return c.Watch(ctx, newList(), listOptions(raw))
		},
	}
	informer := cache.NewSharedIndexInformerWithOptions(lw, example, cache.SharedIndexInformerOptions{})
	if _, err := informer.AddEventHandler(handler); err != nil {
		return nil, fmt.Errorf("watch %T: %w", example, err)
	}
	kind := kopmeta.RefOf(example).Kind
	_ = informer.SetWatchErrorHandlerWithContext(func(ctx context.Context, _ *cache.Reflector, err error) {
		// The reflector retries with backoff and re-lists after 410 Gone;
		// say why the stream paused.
		log.FromContext(ctx).V(1).Info("Watch interrupted, retrying", "kind", kind, "scope", s.String(), "error", err.Error())
	})

	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		informer.RunWithContext(ctx)
	}()
	out := make(chan V)
	go forward(ctx, q, out, stopped)
	return out, nil
}

// forward drains q into out until ctx ends, then waits for the informer to
// stop and closes out, so no goroutine outlives the channel.
func forward[V any](ctx context.Context, q *coalescer[V], out chan<- V, stopped <-chan struct{}) {
	defer func() {
		<-stopped
		close(out)
	}()
	for {
		v, ok := q.pop()
		if !ok {
			select {
			case <-q.ready:
				continue
			case <-ctx.Done():
				return
			}
		}
		select {
		case out <- v:
		case <-ctx.Done():
			return
		}
	}
}

// kindOf resolves T's kind, checks the scope against the RESTMapper and
// returns an example object and a constructor for its list type. This is the
// only reflection, done once per watch.
func kindOf[T client.Object](c client.WithWatch, s scope.Scope) (T, func() client.ObjectList, error) {
	var zero T
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return zero, nil, koperrors.Errorf(koperrors.Invalid, "watch %s: the type parameter must be a pointer to a typed object, such as *corev1.ConfigMap", t)
	}
	example := reflect.New(t.Elem()).Interface().(T)
	gvk, err := apiutil.GVKForObject(example, c.Scheme())
	if err != nil {
		return zero, nil, koperrors.WrapKind(koperrors.Invalid, err, "watch", kopmeta.RefOf(example))
	}
	if err := s.Check(c.RESTMapper(), gvk); err != nil {
		return zero, nil, koperrors.Wrap(err, "watch", kopmeta.RefOf(example))
	}
	listGVK := gvk.GroupVersion().WithKind(gvk.Kind + "List")
	proto, err := c.Scheme().New(listGVK)
	if err != nil {
		return zero, nil, koperrors.WrapKind(koperrors.Invalid, err, "watch", kopmeta.RefOf(example))
	}
	if _, ok := proto.(client.ObjectList); !ok {
		return zero, nil, koperrors.Errorf(koperrors.Invalid, "watch %s: %T is not a list", gvk, proto)
	}
	return example, func() client.ObjectList { return proto.DeepCopyObject().(client.ObjectList) }, nil
}

func keyOf(obj client.Object) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + obj.GetName()
	}
	return obj.GetName()
}

// deleted unwraps the informer's "deleted while disconnected" marker.
func deleted[T client.Object](obj any) (T, bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	o, ok := obj.(T)
	return o, ok
}
