package reconciler_test

import (
	"crypto/rand"
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// A generated password: a create-once Secret keeps the value it was
// created with across reconciles and spec changes, although the sync
// function generates a new one every time.
func TestSyncCreateOnceKeepsTheGeneratedValue(t *testing.T) {
	h := newSyncHarness(t, []client.Object{&corev1.Secret{}})
	h.setDesired(func(*widget.Widget) []client.Object {
		pw := rand.Text()
		return []client.Object{reconciler.Child(&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "db-password"},
			StringData: map[string]string{"password": pw},
		}, reconciler.CreateOnce)}
	})
	h.reconcile()
	s := inNs(h.ns, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-password"}})
	get(t, s)
	first := string(s.Data["password"])
	if first == "" {
		t.Fatal("no password")
	}
	for i := range 10 {
		if i == 5 {
			w := h.getWidget()
			w.Spec.Size++
			if err := cluster.Client().Update(t.Context(), w); err != nil {
				t.Fatal(err)
			}
		}
		h.settle(s)
		h.reconcile()
	}
	get(t, s)
	if got := string(s.Data["password"]); got != first {
		t.Errorf("password after 10 reconciles and a spec change = %q, want the first, %q", got, first)
	}
	if r := conditionOf(h.getWidget(), status.Ready); !strings.HasPrefix(r, "True/ChildrenReady: 1 of 1 children ready: Secret db-password") {
		t.Errorf("Ready = %s", r)
	}
}

// A migration Job runs once per spec generation: it is created once, never
// applied again while the generation is the same, its failure reaches the
// parent's Ready with the Job's reason, and a new generation replaces it
// with a new run.
func TestSyncRunOnceJobPerGeneration(t *testing.T) {
	h := newSyncHarness(t, []client.Object{reconciler.Child(&batchv1.Job{}, reconciler.RunOnce(""))})
	h.setDesired(func(w *widget.Widget) []client.Object {
		return []client.Object{job("migrate", fmt.Sprintf("example.com/migrate:%d", w.Spec.Size))}
	})
	h.reconcile()
	j := inNs(h.ns, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "migrate"}})
	get(t, j)
	uid := j.UID
	if k := j.Annotations[reconciler.RunOnceAnnotation]; k != "1" {
		t.Errorf("run key %q, want the parent's generation 1", k)
	}
	// The Job fails, as a Job controller would record it.
	now := metav1.Now()
	j.Status.StartTime, j.Status.Failed = &now, 1
	j.Status.Conditions = []batchv1.JobCondition{
		{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: now},
		{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: now},
	}
	if err := cluster.Client().Status().Update(t.Context(), j); err != nil {
		t.Fatal(err)
	}
	h.settle(j)
	rv := j.ResourceVersion
	h.traffic.Reset()
	for range 3 {
		h.reconcile()
	}
	get(t, j)
	if j.UID != uid || j.ResourceVersion != rv {
		t.Fatalf("the finished Job was written within its generation (uid %s -> %s, resourceVersion %s -> %s)", uid, j.UID, rv, j.ResourceVersion)
	}
	w := h.getWidget()
	if r := conditionOf(w, status.Ready); !strings.HasPrefix(r, "False/ChildFailed") || !strings.Contains(r, "BackoffLimitExceeded") {
		t.Errorf("Ready = %s, want ChildFailed naming the Job's reason", r)
	}
	// Nothing retries a failed run until its key changes: Stalled, not
	// Reconciling.
	if s, rc := conditionOf(w, status.Stalled), conditionOf(w, status.Reconciling); !strings.HasPrefix(s, "True/ChildFailed") || rc != "-" {
		t.Errorf("Stalled = %s, Reconciling = %s; want Stalled naming the failed run", s, rc)
	}
	// The parent's status takes the failure: one write, two when a reconcile
	// reads the parent from a cache that has not seen the first yet.
	if n := h.traffic.Writes.Load(); n > 2 {
		t.Errorf("%d writes in 3 reconciles of a finished run (want the parent's status only)", n)
	}

	// A new generation: the old run goes, and a new one is created once it
	// is gone.
	w.Spec.Size = 2
	if err := cluster.Client().Update(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	h.settle()
	h.reconcile()
	err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(j), &batchv1.Job{})
	if err == nil {
		var cur batchv1.Job
		_ = cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(j), &cur)
		if cur.UID == uid && cur.DeletionTimestamp == nil {
			t.Fatal("the old run was neither deleted nor replaced")
		}
	} else if !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	h.gone(j)
	h.settle()
	h.reconcile()
	var next batchv1.Job
	if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(j), &next); err != nil {
		t.Fatal(err)
	}
	if next.UID == uid || next.Annotations[reconciler.RunOnceAnnotation] != "2" || next.Spec.Template.Spec.Containers[0].Image != "example.com/migrate:2" {
		t.Errorf("second run: uid %s (first %s), key %q, image %s; want a new Job for generation 2", next.UID, uid, next.Annotations[reconciler.RunOnceAnnotation], next.Spec.Template.Spec.Containers[0].Image)
	}
}

// A sync function's children and their options can be read back in a
// plain unit test.
func TestChildOf(t *testing.T) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}
	obj, opts := reconciler.ChildOf(reconciler.Child(secret, reconciler.CreateOnce, reconciler.DeleteWith{client.GracePeriodSeconds(0)}))
	if obj != secret || opts.Update != reconciler.CreateOnce || len(opts.Delete) != 1 {
		t.Errorf("ChildOf = %v, %+v", obj, opts)
	}
	obj, opts = reconciler.ChildOf(secret)
	if obj != secret || opts.Update != reconciler.InPlace {
		t.Errorf("ChildOf(unwrapped) = %v, %+v", obj, opts)
	}
	_, opts = reconciler.ChildOf(reconciler.Child(job("j", "x"), reconciler.RunOnce("v2")))
	if opts.Update != reconciler.RunOnceStrategy || opts.RunKey != "v2" || opts.Update.String() != "RunOnce" {
		t.Errorf("RunOnce options %+v", opts)
	}
}

// Observed children read typed.
func TestFindAndAll(t *testing.T) {
	observed := reconciler.Children{job("b", "x"), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, job("a", "y")}
	if j, ok := reconciler.Find[*batchv1.Job](observed, "a"); !ok || j.Spec.Template.Spec.Containers[0].Image != "y" {
		t.Errorf("Find(a) = %v, %v", j, ok)
	}
	if _, ok := reconciler.Find[*batchv1.Job](observed, "s"); ok {
		t.Error("Find found a Secret as a Job")
	}
	jobs := reconciler.All[*batchv1.Job](observed)
	if len(jobs) != 2 || jobs[0].Name != "a" || jobs[1].Name != "b" {
		t.Errorf("All = %v", jobs)
	}
}
