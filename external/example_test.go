package external_test

import (
	"context"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/external"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/test/widget"
)

// buckets is an external system of named buckets, one per Widget, whose
// size follows the Widget's spec.size.
type buckets struct {
	mu    sync.Mutex
	sizes map[string]int64 // by ID
	keys  map[string]string
}

func (b *buckets) Observe(_ context.Context, w *widget.Widget, id string) (external.Observation, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	size, ok := b.sizes[id]
	return external.Observation{Exists: ok, UpToDate: size == w.Spec.Size}, nil
}

func (b *buckets) Create(_ context.Context, w *widget.Widget, key string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	id := "bucket-" + w.Name
	b.sizes[id], b.keys[key] = w.Spec.Size, id
	fmt.Println("create", id)
	return id, nil
}

func (b *buckets) Update(_ context.Context, w *widget.Widget, id string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sizes[id] = w.Spec.Size
	fmt.Println("update", id)
	return nil
}

func (b *buckets) Delete(_ context.Context, _ *widget.Widget, id string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.sizes, id)
	fmt.Println("delete", id)
	return nil
}

// Find makes a create whose outcome is unknown (a crash before the ID was
// recorded) resolvable without a person.
func (b *buckets) Find(_ context.Context, _ *widget.Widget, key string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.keys[key], nil
}

// A Reconciler driven by hand, as kopgo's loop drives it: the first
// reconcile creates the bucket and records its ID on the object, a spec
// change updates it, and Cleanup deletes it. With the controller Builder
// this is kopcontroller.New[*widget.Widget]("buckets", r).Run(ctx).
func Example() {
	system := &buckets{sizes: map[string]int64{}, keys: map[string]string{}}
	r := external.New(func(context.Context, *widget.Widget, *reconciler.Env) (external.Client[*widget.Widget], error) {
		return system, nil // read credentials here, from a Secret the object names
	})

	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "photos", UID: "0b9c"}, Spec: widget.WidgetSpec{Size: 10}}
	c := fake.NewClientBuilder().WithScheme(widget.Scheme()).WithObjects(w).Build()
	env := &reconciler.Env{Client: c, Reader: c, Recorder: &observability.FakeRecorder{}, Scheme: widget.Scheme()}
	ctx := context.Background()

	if _, err := r.Reconcile(ctx, w, env); err != nil {
		fmt.Println(err)
	}
	fmt.Println("recorded:", w.Annotations[external.NameAnnotation])

	w.Spec.Size = 20
	w.Generation++
	if _, err := r.Reconcile(ctx, w, env); err != nil {
		fmt.Println(err)
	}
	if _, err := r.Cleanup(ctx, w, env); err != nil {
		fmt.Println(err)
	}
	// Output:
	// create bucket-photos
	// recorded: bucket-photos
	// update bucket-photos
	// delete bucket-photos
}

// With the Orphan policy, deleting an object leaves its resource at the
// provider: Cleanup calls nothing.
func ExampleWithDeletionPolicy() {
	system := &buckets{sizes: map[string]int64{}, keys: map[string]string{}}
	r := external.New(func(context.Context, *widget.Widget, *reconciler.Env) (external.Client[*widget.Widget], error) {
		return system, nil
	}, external.WithDeletionPolicy(external.Orphan))

	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "logs", UID: "7f21"}, Spec: widget.WidgetSpec{Size: 1}}
	c := fake.NewClientBuilder().WithScheme(widget.Scheme()).WithObjects(w).Build()
	env := &reconciler.Env{Client: c, Reader: c, Recorder: &observability.FakeRecorder{}, Scheme: widget.Scheme()}
	ctx := context.Background()

	if _, err := r.Reconcile(ctx, w, env); err != nil {
		fmt.Println(err)
	}
	if _, err := r.Cleanup(ctx, w, env); err != nil {
		fmt.Println(err)
	}
	fmt.Println("buckets left:", len(system.sizes))
	// Output:
	// create bucket-logs
	// buckets left: 1
}

// checkedBuckets is buckets with a Validator: a bucket's size must be
// positive.
type checkedBuckets struct{ *buckets }

func (checkedBuckets) Validate(_ context.Context, w *widget.Widget) error {
	if w.Spec.Size < 1 {
		return fmt.Errorf("spec.size: %d: must be at least 1", w.Spec.Size)
	}
	return nil
}

// A Client with Validate: an invalid spec is a terminal error (the object
// Stalled, reason InvalidSpec) before any call to the system.
func ExampleValidator() {
	system := checkedBuckets{&buckets{sizes: map[string]int64{}, keys: map[string]string{}}}
	r := external.New(func(context.Context, *widget.Widget, *reconciler.Env) (external.Client[*widget.Widget], error) {
		return system, nil
	})

	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "empty", UID: "c3d4"}, Spec: widget.WidgetSpec{Size: 0}}
	c := fake.NewClientBuilder().WithScheme(widget.Scheme()).WithObjects(w).Build()
	env := &reconciler.Env{Client: c, Reader: c, Recorder: &observability.FakeRecorder{}, Scheme: widget.Scheme()}

	_, err := r.Reconcile(context.Background(), w, env)
	fmt.Println(koperrors.IsTerminal(err), koperrors.ReasonOf(err))
	fmt.Println(err)
	// Output:
	// true InvalidSpec
	// validate the spec of Widget default/empty: spec.size: 0: must be at least 1
}
