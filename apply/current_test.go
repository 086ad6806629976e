package apply_test

import (
	"context"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/apply"
)

// countingReader counts the reads of a cache.
type countingReader struct {
	client.Reader
	gets atomic.Int64
}

func (r *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.gets.Add(1)
	return r.Reader.Get(ctx, key, obj, opts...)
}

// Current hands the Applier the object as the caller read it: an unchanged
// apply then reads neither the cache nor the API server, and a change is
// still sent. An object of another name or kind is ignored.
func TestCurrentSparesTheCacheRead(t *testing.T) {
	ns := cluster.Namespace(t)
	informers := startCache(t)
	reader := &countingReader{Reader: informers}
	a, requests := newApplier(t, apply.WithCache(reader))
	ctx := t.Context()
	data := map[string]string{"k": "v"}
	res, err := a.Apply(ctx, configMapAC(ns, "cm", data))
	if err != nil {
		t.Fatal(err)
	}
	observed := cmKey(ns, "cm")
	waitCached(t, informers, observed, res.Object().GetResourceVersion())
	other := cmKey(ns, "other")
	secret := &corev1.Secret{}
	secret.Namespace, secret.Name = ns, "cm"

	for _, tt := range []struct {
		name           string
		given          client.Object
		data           map[string]string
		gets, requests int64
		want           apply.Outcome
	}{
		{"the object as read, unchanged", observed, data, 0, 0, apply.Unchanged},
		{"another name: the cache is read", other, data, 1, 0, apply.Unchanged},
		{"another kind: the cache is read", secret, data, 1, 0, apply.Unchanged},
		{"nil: the cache is read", nil, data, 1, 0, apply.Unchanged},
		{"the object as read, and a change", observed, map[string]string{"k": "w"}, 0, 1, apply.Updated},
	} {
		reader.gets.Store(0)
		requests.all.Store(0)
		res, err := a.Apply(ctx, configMapAC(ns, "cm", tt.data), apply.Current(tt.given))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if res.Outcome != tt.want || reader.gets.Load() != tt.gets || requests.all.Load() != tt.requests {
			t.Errorf("%s: %s with %d cache reads and %d requests; want %s with %d and %d",
				tt.name, res.Outcome, reader.gets.Load(), requests.all.Load(), tt.want, tt.gets, tt.requests)
		}
	}
}
