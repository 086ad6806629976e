package resources_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/resources"
	"github.com/kopgo/kopgo/scope"
)

func TestPoll(t *testing.T) {
	ns := cluster.Namespace(t)
	c, tr := countedClient(t)
	ready := func(cm *corev1.ConfigMap) (bool, error) { return cm.Data["ready"] == "yes", nil }

	t.Run("missing object is NotFound by default", func(t *testing.T) {
		got, err := resources.Poll(t.Context(), c, scope.Namespaced(ns), "later", ready)
		if got != nil || koperrors.KindOf(err) != koperrors.NotFound {
			t.Errorf("Poll = %v, %v; want nil and NotFound", got, err)
		}
	})

	t.Run("waits for creation and the condition", func(t *testing.T) {
		go func() {
			time.Sleep(300 * time.Millisecond)
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "later"}}
			_ = cluster.Client().Create(context.Background(), cm)
			time.Sleep(300 * time.Millisecond)
			cm.Data = map[string]string{"ready": "yes"}
			_ = cluster.Client().Update(context.Background(), cm)
		}()
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		tr.Reset()
		start := time.Now()
		got, err := resources.Poll(ctx, c, scope.Namespaced(ns), "later", ready, resources.AllowNotFound{})
		t.Logf("Poll: %d reads over %s", tr.Requests.Load(), time.Since(start))
		if err != nil || got == nil || got.Data["ready"] != "yes" {
			t.Fatalf("Poll = %v, %v", got, err)
		}
	})

	t.Run("deadline reports the last state", func(t *testing.T) {
		current, err := resources.Get[corev1.ConfigMap](t.Context(), c, scope.Namespaced(ns), "later")
		if err != nil {
			t.Fatal(err)
		}
		short, cancel := context.WithTimeout(t.Context(), 600*time.Millisecond)
		defer cancel()
		never := func(*corev1.ConfigMap) (bool, error) { return false, nil }
		got, err := resources.Poll(short, c, scope.Namespaced(ns), "later", never)
		if koperrors.KindOf(err) != koperrors.Timeout {
			t.Fatalf("Poll past its deadline = %v, want Kind Timeout", err)
		}
		if got == nil || got.Data["ready"] != "yes" {
			t.Errorf("Poll past its deadline returned %v, want the last object read", got)
		}
		want := "poll ConfigMap " + ns + "/later: context deadline exceeded; last seen resourceVersion " + current.ResourceVersion
		if !strings.HasPrefix(err.Error(), want) {
			t.Errorf("error = %q, want prefix %q", err, want)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error %v does not wrap context.DeadlineExceeded", err)
		}
	})

	t.Run("condition error ends the poll", func(t *testing.T) {
		boom := errors.New("boom")
		got, err := resources.Poll(t.Context(), c, scope.Namespaced(ns), "later", func(*corev1.ConfigMap) (bool, error) { return false, boom })
		if !errors.Is(err, boom) || got == nil {
			t.Errorf("Poll = %v, %v; want the object and boom", got, err)
		}
	})

	t.Run("PollUntilGone with ForUID", func(t *testing.T) {
		old, err := resources.Get[corev1.ConfigMap](t.Context(), c, scope.Namespaced(ns), "later")
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(t.Context(), old); err != nil {
			t.Fatal(err)
		}
		configMaps(t, ns, "later") // re-created under the same name
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		if last, err := resources.PollUntilGone[corev1.ConfigMap](ctx, c, scope.Namespaced(ns), "later", resources.ForUID(old.UID)); last != nil || err != nil {
			t.Errorf("PollUntilGone(ForUID) = %v, %v; want nil, nil", last, err)
		}
		short, cancel2 := context.WithTimeout(t.Context(), 400*time.Millisecond)
		defer cancel2()
		if _, err := resources.PollUntilGone[corev1.ConfigMap](short, c, scope.Namespaced(ns), "later"); koperrors.KindOf(err) != koperrors.Timeout {
			t.Errorf("PollUntilGone without ForUID = %v, want a Timeout", err)
		}
	})

	t.Run("cancellation is not a timeout", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(300*time.Millisecond, cancel)
		_, err := resources.Poll(ctx, c, scope.Namespaced(ns), "later", func(*corev1.ConfigMap) (bool, error) { return false, nil })
		if err == nil || koperrors.KindOf(err) == koperrors.Timeout || !errors.Is(err, context.Canceled) {
			t.Errorf("Poll after cancel = %v, want context.Canceled and not a Timeout", err)
		}
	})
}

func TestDeleteWithFinalizerThenPollUntilGone(t *testing.T) {
	ns := cluster.Namespace(t)
	c, tr := countedClient(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "held", Finalizers: []string{"example.com/hold"}}}
	if err := c.Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(t.Context(), cm); err != nil {
		t.Fatal(err)
	}

	// The finalizer holds it: the wait times out and says why.
	short, cancel := context.WithTimeout(t.Context(), 700*time.Millisecond)
	defer cancel()
	tr.Reset()
	last, err := resources.PollUntilGone[corev1.ConfigMap](short, c, scope.Namespaced(ns), "held", resources.Interval(100*time.Millisecond))
	reads := requests(tr)
	t.Logf("PollUntilGone for 700ms at 100ms: %d reads", reads)
	if koperrors.KindOf(err) != koperrors.Timeout || last == nil || last.DeletionTimestamp == nil {
		t.Fatalf("PollUntilGone = %v, %v; want the terminating object and a Timeout", last, err)
	}
	for _, want := range []string{"wait for deletion of ConfigMap " + ns + "/held: ", "deleting since", "finalizers [example.com/hold]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if reads < 4 || reads > 8 {
		t.Errorf("%d reads in 700ms at a 100ms interval, want 4 to 8", reads)
	}

	// Released, it goes.
	patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))
	if err := c.Patch(t.Context(), last, patch); err != nil {
		t.Fatal(err)
	}
	ctx, cancel2 := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel2()
	if last, err := resources.PollUntilGone[corev1.ConfigMap](ctx, c, scope.Namespaced(ns), "held"); last != nil || err != nil {
		t.Errorf("PollUntilGone after the finalizer went = %v, %v; want nil, nil", last, err)
	}
}

// PollAny returns the first object of a selected list that matches, once
// one does; until then it polls, and at the deadline says what it saw.
func TestPollAny(t *testing.T) {
	ns := cluster.Namespace(t)
	c, tr := countedClient(t)
	web := map[string]string{"app": "web"}
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-1", Labels: web}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-2", Labels: web}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db", Labels: map[string]string{"app": "db"}}, Data: map[string]string{"ready": "yes"}},
	} {
		if err := c.Create(t.Context(), cm); err != nil {
			t.Fatal(err)
		}
	}
	ready := func(cm *corev1.ConfigMap) (bool, error) { return cm.Data["ready"] == "yes", nil }
	selected := client.MatchingLabels{"app": "web"}
	tr.Reset()

	short, cancel := context.WithTimeout(t.Context(), 700*time.Millisecond)
	defer cancel()
	got, err := resources.PollAny(short, c, scope.Namespaced(ns), ready, selected, resources.Interval(100*time.Millisecond))
	lists := requests(tr)
	if got != nil || koperrors.KindOf(err) != koperrors.Timeout || !strings.Contains(err.Error(), "poll any ConfigMap "+ns+"/: context deadline exceeded; last seen 2 objects, none matching") {
		t.Fatalf("PollAny with none ready = %v, %v; want nil and a Timeout that counts 2 objects", got, err)
	}
	if lists < 4 || lists > 8 {
		t.Errorf("%d lists in 700ms at a 100ms interval, want 4 to 8", lists)
	}

	go func() {
		time.Sleep(300 * time.Millisecond)
		patch := client.RawPatch(types.MergePatchType, []byte(`{"data":{"ready":"yes"}}`))
		_ = cluster.Client().Patch(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-2"}}, patch)
	}()
	ctx, cancel2 := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel2()
	got, err = resources.PollAny(ctx, c, scope.Namespaced(ns), ready, selected, resources.Interval(50*time.Millisecond))
	if err != nil || got == nil || got.Name != "web-2" {
		t.Fatalf("PollAny = %v, %v; want web-2", got, err)
	}

	boom := errors.New("boom")
	got, err = resources.PollAny(t.Context(), c, scope.Namespaced(ns), func(*corev1.ConfigMap) (bool, error) { return false, boom }, selected)
	if !errors.Is(err, boom) || got == nil {
		t.Errorf("PollAny = %v, %v; want an object and boom", got, err)
	}
}
