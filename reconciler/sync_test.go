package reconciler_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/internal/loop"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/testkit"
	"github.com/kopgo/kopgo/test/widget"
)

// ownerLabel is the default owner label of Widget parents.
const ownerLabel = "test.kopgo.dev/widget"

// syncHarness runs a Sync reconciler through an Adapter on a real manager
// (its cache, its Applier) whose traffic is counted, as in production.
type syncHarness struct {
	t       *testing.T
	ns      string
	w       *widget.Widget
	env     *reconciler.Env
	adapter *loop.Loop[*widget.Widget]
	traffic *testkit.Traffic
	events  *observability.FakeRecorder

	mu       sync.Mutex
	desired  func(w *widget.Widget) []client.Object
	observed []string // "Kind/name" of the children the last sync saw
}

func newSyncHarness(t *testing.T, kinds []client.Object, opts ...reconciler.SyncOption) *syncHarness {
	t.Helper()
	h := &syncHarness{t: t, ns: cluster.Namespace(t), events: &observability.FakeRecorder{}}
	h.w = &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "w"}, Spec: widget.WidgetSpec{Size: 1}}
	if err := cluster.Client().Create(t.Context(), h.w); err != nil {
		t.Fatal(err)
	}
	cfg, traffic := cluster.CountedConfig()
	mgr, err := manager.New(cfg, manager.Options{
		Scheme:  cluster.Scheme(),
		Metrics: metricsserver.Options{BindAddress: "0"},
		Cache:   cache.Options{DefaultNamespaces: map[string]cache.Config{h.ns: {}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	if !mgr.GetCache().WaitForCacheSync(t.Context()) {
		t.Fatal("cache did not sync")
	}
	h.env = envFromManager(t, mgr, "sync-test", h.events)
	m, err := observability.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	r := reconciler.Sync(kinds, h.sync, opts...)
	h.adapter, err = loop.New[*widget.Widget]("sync", h.env, r, loop.Options{Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	h.traffic = traffic
	return h
}

// sync is the harness' sync function: it records what it observed and returns
// h.desired.
func (h *syncHarness) sync(_ context.Context, w *widget.Widget, observed reconciler.Children) ([]client.Object, reconciler.Action, error) {
	var seen []string
	for _, cm := range observed.List(&corev1.ConfigMap{}) {
		seen = append(seen, "ConfigMap/"+cm.GetName())
	}
	for _, s := range observed.List(&corev1.Secret{}) {
		seen = append(seen, "Secret/"+s.GetName())
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.observed = seen
	return h.desired(w), reconciler.Done(), nil
}

func (h *syncHarness) setDesired(f func(w *widget.Widget) []client.Object) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.desired = f
}

func (h *syncHarness) lastObserved() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.observed)
}

func (h *syncHarness) reconcile() {
	h.t.Helper()
	// The loop defers a reconcile whose cached parent is older than its
	// own last status write (read your own writes): wait for the cache, as
	// the queue would, so that this call runs the sync.
	h.settle()
	// A terminal error is the outcome some tests expect; status shows it.
	if _, err := wake(h.t, h.adapter, client.ObjectKeyFromObject(h.w)); err != nil && !koperrors.IsTerminal(err) {
		h.t.Fatalf("Reconcile: %v", err)
	}
}

func (h *syncHarness) getWidget() *widget.Widget {
	h.t.Helper()
	var got widget.Widget
	if err := cluster.Client().Get(h.t.Context(), client.ObjectKeyFromObject(h.w), &got); err != nil {
		h.t.Fatal(err)
	}
	return &got
}

// settle waits until the manager's cache holds the server's current version
// of the parent and of every given object, so that a following sync sees
// what the server has.
func (h *syncHarness) settle(objs ...client.Object) {
	h.t.Helper()
	objs = append(objs, &widget.Widget{ObjectMeta: h.w.ObjectMeta})
	err := wait.PollUntilContextTimeout(h.t.Context(), 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, o := range objs {
			live := o.DeepCopyObject().(client.Object)
			cached := o.DeepCopyObject().(client.Object)
			key := client.ObjectKeyFromObject(o)
			if err := cluster.Client().Get(ctx, key, live); err != nil {
				return false, err
			}
			if err := h.env.Client.Get(ctx, key, cached); err != nil || cached.GetResourceVersion() != live.GetResourceVersion() {
				return false, nil //nolint:nilerr // not in the cache yet: poll again
			}
		}
		return true, nil
	})
	if err != nil {
		h.t.Fatalf("cache did not catch up: %v", err)
	}
}

func configMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}
}

func secret(name string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string][]byte{"k": []byte("v")}}
}

func TestSyncCreatesChildrenWithOwnerReferenceAndLabel(t *testing.T) {
	h := newSyncHarness(t, []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}})
	h.setDesired(func(w *widget.Widget) []client.Object {
		w.Status.Phase = "Synced" // a sync function may set status
		return []client.Object{configMap(w.Name+"-config", map[string]string{"size": "1"}), secret(w.Name + "-secret")}
	})
	h.reconcile()

	w := h.getWidget()
	wantRef := metav1.OwnerReference{
		APIVersion: widget.GroupVersion.String(), Kind: "Widget", Name: "w", UID: w.UID,
		Controller: new(true), BlockOwnerDeletion: new(true),
	}
	for _, o := range []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}} {
		name := "w-config"
		if _, ok := o.(*corev1.Secret); ok {
			name = "w-secret"
		}
		if err := cluster.Client().Get(t.Context(), types.NamespacedName{Namespace: h.ns, Name: name}, o); err != nil {
			t.Fatalf("child %s: %v", name, err)
		}
		if diff := cmp.Diff([]metav1.OwnerReference{wantRef}, o.GetOwnerReferences()); diff != "" {
			t.Errorf("%s owner references (-want +got):\n%s", name, diff)
		}
		if got := o.GetLabels()[ownerLabel]; got != "w" {
			t.Errorf("%s label %s = %q, want %q", name, ownerLabel, got, "w")
		}
	}
	var cm corev1.ConfigMap
	if err := cluster.Client().Get(t.Context(), types.NamespacedName{Namespace: h.ns, Name: "w-config"}, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["size"] != "1" {
		t.Errorf("ConfigMap data = %v, want size=1", cm.Data)
	}
	if w.Status.Phase != "Synced" || !status.IsTrue(w, status.Ready) {
		t.Errorf("parent status = %+v, want phase Synced and Ready", w.Status)
	}
	// One event for the reconcile, naming both children, not one per child.
	var notes []string
	for _, e := range h.events.Events() {
		notes = append(notes, e.Reason+": "+e.Note)
	}
	want := []string{"Synced: created ConfigMap " + h.ns + "/w-config, Secret " + h.ns + "/w-secret"}
	if diff := cmp.Diff(want, notes); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestSyncDeletesChildNoLongerDesired(t *testing.T) {
	h := newSyncHarness(t, []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}})
	h.setDesired(func(*widget.Widget) []client.Object {
		return []client.Object{configMap("a", nil), configMap("b", nil), secret("s")}
	})
	h.reconcile()
	for _, o := range []client.Object{configMap("a", nil), configMap("b", nil), secret("s")} {
		o.SetNamespace(h.ns)
		h.settle(o)
	}

	h.setDesired(func(*widget.Widget) []client.Object { return []client.Object{configMap("a", nil)} })
	h.reconcile()
	if diff := cmp.Diff([]string{"ConfigMap/a", "ConfigMap/b", "Secret/s"}, h.lastObserved()); diff != "" {
		t.Errorf("observed children (-want +got):\n%s", diff)
	}
	for name, want := range map[string]bool{"a": true, "b": false} {
		err := cluster.Client().Get(t.Context(), types.NamespacedName{Namespace: h.ns, Name: name}, &corev1.ConfigMap{})
		if exists := err == nil; exists != want || (err != nil && !apierrors.IsNotFound(err)) {
			t.Errorf("ConfigMap %s: exists=%v (err %v), want %v", name, exists, err, want)
		}
	}
	err := cluster.Client().Get(t.Context(), types.NamespacedName{Namespace: h.ns, Name: "s"}, &corev1.Secret{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("Secret s no longer desired: Get = %v, want NotFound", err)
	}
	events := h.events.Events()
	if len(events) != 2 || events[1].Note != "deleted ConfigMap "+h.ns+"/b, Secret "+h.ns+"/s" {
		t.Errorf("events %v, want the second to name both deletions", events)
	}
}

func TestSyncLeavesOtherParentsChildrenAlone(t *testing.T) {
	h := newSyncHarness(t, []client.Object{&corev1.ConfigMap{}})
	// A child of another Widget with the same label value, and an unlabelled
	// ConfigMap controlled by our Widget: neither is ours to sync.
	other := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "other"}}
	if err := cluster.Client().Create(t.Context(), other); err != nil {
		t.Fatal(err)
	}
	ref := func(w *widget.Widget) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: widget.GroupVersion.String(), Kind: "Widget", Name: w.Name, UID: w.UID, Controller: new(true)}}
	}
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Namespace: h.ns, Name: "foreign", Labels: map[string]string{ownerLabel: "w"}, OwnerReferences: ref(other),
	}}
	unlabelled := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "unlabelled", OwnerReferences: ref(h.w)}}
	for _, o := range []*corev1.ConfigMap{foreign, unlabelled} {
		if err := cluster.Client().Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	h.settle(foreign, unlabelled)

	h.setDesired(func(*widget.Widget) []client.Object { return []client.Object{configMap("mine", nil)} })
	h.reconcile()
	h.setDesired(func(*widget.Widget) []client.Object { return nil })
	mine := configMap("mine", nil)
	mine.Namespace = h.ns
	h.settle(mine)
	h.reconcile()

	if diff := cmp.Diff([]string{"ConfigMap/mine"}, h.lastObserved()); diff != "" {
		t.Errorf("observed children (-want +got):\n%s", diff)
	}
	if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(mine), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("our child no longer desired: Get = %v, want NotFound", err)
	}
	for _, o := range []*corev1.ConfigMap{foreign, unlabelled} {
		var got corev1.ConfigMap
		if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(o), &got); err != nil {
			t.Errorf("ConfigMap %s: %v, want it untouched", o.Name, err)
			continue
		}
		if got.ResourceVersion != o.ResourceVersion {
			t.Errorf("ConfigMap %s was written (resourceVersion %s -> %s)", o.Name, o.ResourceVersion, got.ResourceVersion)
		}
	}
}

func TestSyncUnchangedSendsNoRequest(t *testing.T) {
	h := newSyncHarness(t, []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}})
	data := map[string]string{"v": "1"}
	var mu sync.Mutex
	h.setDesired(func(*widget.Widget) []client.Object {
		mu.Lock()
		defer mu.Unlock()
		return []client.Object{configMap("a", maps.Clone(data)), configMap("b", nil), secret("s")}
	})
	h.reconcile()
	a, b, s := configMap("a", nil), configMap("b", nil), secret("s")
	a.Namespace, b.Namespace, s.Namespace = h.ns, h.ns, h.ns
	h.settle(a, b, s)
	rv := h.getWidget().ResourceVersion

	h.traffic.Reset()
	h.reconcile()
	if n := h.traffic.Requests.Load(); n != 0 {
		t.Errorf("an unchanged sync of 3 children sent %d requests, want 0", n)
	}
	if got := h.getWidget().ResourceVersion; got != rv {
		t.Errorf("an unchanged sync wrote the parent (resourceVersion %s -> %s)", rv, got)
	}

	// One child changes: one apply request, and nothing else.
	mu.Lock()
	data["v"] = "2"
	mu.Unlock()
	h.traffic.Reset()
	h.reconcile()
	if n := h.traffic.Requests.Load(); n != 1 {
		t.Errorf("a sync changing one child sent %d requests, want 1", n)
	}
	var got corev1.ConfigMap
	if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(a), &got); err != nil || got.Data["v"] != "2" {
		t.Errorf("ConfigMap a after the change: %v, data %v; want v=2", err, got.Data)
	}

	// A new child: a live get (is the name free?) and its apply, the
	// changed child's apply, and the status write of the parent, whose
	// Ready now counts 4 children.
	h.settle(a)
	mu.Lock()
	data["new"] = "yes"
	mu.Unlock()
	h.setDesired(func(*widget.Widget) []client.Object {
		mu.Lock()
		defer mu.Unlock()
		return []client.Object{configMap("a", maps.Clone(data)), configMap("b", nil), configMap("c", nil), secret("s")}
	})
	h.traffic.Reset()
	h.reconcile()
	if n := h.traffic.Requests.Load(); n != 4 {
		t.Errorf("a sync creating one child and changing another sent %d requests, want 4", n)
	}
}

func TestSyncRefusesUndeclaredKindBeforeWriting(t *testing.T) {
	h := newSyncHarness(t, []client.Object{&corev1.ConfigMap{}})
	h.setDesired(func(*widget.Widget) []client.Object {
		return []client.Object{configMap("fine", nil), secret("sneaky")}
	})
	h.reconcile() // a terminal error: no retry, reported in status

	w := h.getWidget()
	stalled := status.Get(w, status.Stalled)
	if stalled == nil || stalled.Status != metav1.ConditionTrue || stalled.Reason != "Config" {
		t.Fatalf("Stalled = %+v, want True with reason Config", stalled)
	}
	for _, want := range []string{"desired child Secret sneaky", "not among the declared child kinds"} {
		if !strings.Contains(stalled.Message, want) {
			t.Errorf("Stalled message %q does not contain %q", stalled.Message, want)
		}
	}
	err := cluster.Client().Get(t.Context(), types.NamespacedName{Namespace: h.ns, Name: "fine"}, &corev1.ConfigMap{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("a declared child was applied although the desired set was refused: Get = %v", err)
	}
}

// TestSyncRefusals calls the Syncer directly to check each mistake's error.
func TestSyncRefusals(t *testing.T) {
	h := newSyncHarness(t, []client.Object{&corev1.ConfigMap{}})
	w := h.getWidget()
	other := configMap("elsewhere", nil)
	other.Namespace = "default"
	tests := []struct {
		name     string
		kinds    []client.Object
		desired  []client.Object
		opts     []reconciler.SyncOption
		kind     koperrors.Kind
		contains string
	}{
		{"undeclared kind", []client.Object{&corev1.ConfigMap{}}, []client.Object{secret("x")}, nil, koperrors.Config, "desired child Secret x: kind Secret is not among"},
		{"other namespace", []client.Object{&corev1.ConfigMap{}}, []client.Object{other}, nil, koperrors.Invalid, "ConfigMap default/elsewhere"},
		{"twice", []client.Object{&corev1.ConfigMap{}}, []client.Object{configMap("x", nil), configMap("x", nil)}, nil, koperrors.Config, "returned twice"},
		{"no name", []client.Object{&corev1.ConfigMap{}}, []client.Object{configMap("", nil)}, nil, koperrors.Invalid, "has no name"},
		{"cluster-scoped child of a namespaced parent", []client.Object{&rbacv1.ClusterRole{}}, nil, nil, koperrors.Config, "ClusterRole.rbac.authorization.k8s.io is cluster-scoped"},
		{"no kinds", nil, nil, nil, koperrors.Config, "no child kinds"},
		{"bad label key", []client.Object{&corev1.ConfigMap{}}, nil, []reconciler.SyncOption{reconciler.WithOwnerLabel("not a key")}, koperrors.Invalid, "not a key"},
		{"dependency not desired", []client.Object{&corev1.ConfigMap{}}, []client.Object{reconciler.Child(configMap("a", nil), reconciler.DependsOn{configMap("b", nil)})}, nil,
			koperrors.Config, "desired child ConfigMap " + w.Namespace + "/a depends on ConfigMap " + w.Namespace + "/b, which is not a desired child"},
		{"dependency cycle", []client.Object{&corev1.ConfigMap{}}, []client.Object{
			reconciler.Child(configMap("a", nil), reconciler.DependsOn{configMap("b", nil)}),
			reconciler.Child(configMap("b", nil), reconciler.DependsOn{configMap("a", nil)}),
		}, nil, koperrors.Config, "cycle: ConfigMap " + w.Namespace + "/a -> ConfigMap " + w.Namespace + "/b -> ConfigMap " + w.Namespace + "/a"},
		{"depends on itself", []client.Object{&corev1.ConfigMap{}}, []client.Object{reconciler.Child(configMap("a", nil), reconciler.DependsOn{configMap("a", nil)})}, nil,
			koperrors.Config, "depends on itself"},
		{"DependsOn on a kind", []client.Object{reconciler.Child(&corev1.ConfigMap{}, reconciler.DependsOn{configMap("a", nil)})}, nil, nil, koperrors.Config, "DependsOn names children, not kinds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := reconciler.Sync(tt.kinds, func(context.Context, *widget.Widget, reconciler.Children) ([]client.Object, reconciler.Action, error) {
				return tt.desired, reconciler.Done(), nil
			}, tt.opts...)
			_, err := r.Reconcile(t.Context(), w, h.env)
			if err == nil {
				t.Fatal("Reconcile = nil, want an error")
			}
			if !koperrors.IsTerminal(err) || koperrors.KindOf(err) != tt.kind || !strings.Contains(err.Error(), tt.contains) {
				t.Errorf("Reconcile = %v (terminal %v, kind %v), want a terminal %v error containing %q",
					err, koperrors.IsTerminal(err), koperrors.KindOf(err), tt.kind, tt.contains)
			}
		})
	}
	var cms corev1.ConfigMapList
	if err := cluster.Client().List(t.Context(), &cms, client.InNamespace(h.ns), client.HasLabels{ownerLabel}); err != nil || len(cms.Items) != 0 {
		t.Errorf("refused syncs wrote %d children (%v)", len(cms.Items), err)
	}
}

func TestChildren(t *testing.T) {
	u := func(apiVersion, kind, name string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{}
		o.SetAPIVersion(apiVersion)
		o.SetKind(kind)
		o.SetName(name)
		return o
	}
	ch := reconciler.Children{configMap("b", nil), configMap("a", nil), secret("s"),
		u("apps/v1", "Deployment", "d"), u("v1", "Service", "a")}
	names := func(objs []client.Object) []string {
		var out []string
		for _, o := range objs {
			out = append(out, o.GetName())
		}
		return out
	}
	tests := []struct {
		name string
		kind client.Object
		want []string
	}{
		{"typed, sorted", &corev1.ConfigMap{}, []string{"a", "b"}},
		{"typed", &corev1.Secret{}, []string{"s"}},
		{"absent", &corev1.Service{}, nil},
		{"unstructured by kind", u("apps/v1", "Deployment", ""), []string{"d"}},
		{"unstructured, other version", u("apps/v1beta1", "Deployment", ""), []string{"d"}},
		{"unstructured without kind", &unstructured.Unstructured{}, nil},
		{"nil", nil, nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, names(ch.List(tt.kind))); diff != "" {
			t.Errorf("%s: List (-want +got):\n%s", tt.name, diff)
		}
	}
	if s, ok := ch.Get(&corev1.Secret{}, "s").(*corev1.Secret); !ok || s.Name != "s" {
		t.Errorf("Get(Secret, s) = %v, %v", s, ok)
	}
	if _, ok := ch.Get(&corev1.Secret{}, "a").(*corev1.Secret); ok {
		t.Error("Get(Secret, a) found a ConfigMap")
	}
	if got := ch.Get(&corev1.Service{}, "a"); got != nil {
		t.Errorf("Get(typed Service, a) = %v, want nil: the only Service is unstructured", got)
	}
	if got := ch.Get(u("v1", "Service", ""), "a"); got == nil || got.GetName() != "a" {
		t.Errorf("Get(unstructured Service, a) = %v", got)
	}
	if got := (reconciler.Children{}).List(&corev1.ConfigMap{}); got != nil {
		t.Errorf("empty List = %v", got)
	}
}

func TestSyncAppliesThenRequeues(t *testing.T) {
	h := newSyncHarness(t, []client.Object{&corev1.ConfigMap{}})
	r := reconciler.Sync([]client.Object{&corev1.ConfigMap{}},
		func(context.Context, *widget.Widget, reconciler.Children) ([]client.Object, reconciler.Action, error) {
			return []client.Object{configMap("later", nil)}, reconciler.RequeueAfter(time.Minute), nil
		})
	a, err := loop.New[*widget.Widget]("sync-requeue", h.env, r, loop.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := wake(t, a, client.ObjectKeyFromObject(h.w))
	if err != nil || res.RequeueAfter != time.Minute {
		t.Errorf("Reconcile = %+v, %v; want a requeue after 1m", res, err)
	}
	if err := cluster.Client().Get(t.Context(), types.NamespacedName{Namespace: h.ns, Name: "later"}, &corev1.ConfigMap{}); err != nil {
		t.Errorf("child of a sync that asked to come back later: %v, want it applied", err)
	}
}

// A cluster-scoped parent (here a Namespace) owns cluster-scoped children
// and namespaced children that name their namespace.
func TestSyncClusterScopedParent(t *testing.T) {
	h := newSyncHarness(t, []client.Object{&corev1.ConfigMap{}})
	var parent corev1.Namespace
	if err := h.env.Client.Get(t.Context(), client.ObjectKey{Name: h.ns}, &parent); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: h.ns + "-role"}}
	cm := configMap("in-ns", nil)
	cm.Namespace = h.ns
	var desired []client.Object
	r := reconciler.Sync([]client.Object{&corev1.ConfigMap{}, &rbacv1.ClusterRole{}},
		func(context.Context, *corev1.Namespace, reconciler.Children) ([]client.Object, reconciler.Action, error) {
			return desired, reconciler.Done(), nil
		})

	desired = []client.Object{cm, role}
	if _, err := r.Reconcile(t.Context(), &parent, h.env); err != nil {
		t.Fatal(err)
	}
	for _, o := range []client.Object{&rbacv1.ClusterRole{ObjectMeta: role.ObjectMeta}, &corev1.ConfigMap{ObjectMeta: cm.ObjectMeta}} {
		if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(o), o); err != nil {
			t.Fatal(err)
		}
		if !metav1.IsControlledBy(o, &parent) || o.GetLabels()["sync.kopgo.dev/namespace"] != h.ns {
			t.Errorf("%s: owners %v, labels %v; want controlled by Namespace %s and labelled", o.GetName(), o.GetOwnerReferences(), o.GetLabels(), h.ns)
		}
	}
	h.settle(&rbacv1.ClusterRole{ObjectMeta: role.ObjectMeta}, &corev1.ConfigMap{ObjectMeta: cm.ObjectMeta})

	desired = []client.Object{cm}
	if _, err := r.Reconcile(t.Context(), &parent, h.env); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(role), &rbacv1.ClusterRole{}); !apierrors.IsNotFound(err) {
		t.Errorf("cluster-scoped child no longer desired: Get = %v, want NotFound", err)
	}

	desired = []client.Object{configMap("nowhere", nil)}
	_, err := r.Reconcile(t.Context(), &parent, h.env)
	if !koperrors.IsTerminal(err) || koperrors.KindOf(err) != koperrors.Invalid || !strings.Contains(err.Error(), "must name its namespace") {
		t.Errorf("namespaced child of a cluster-scoped parent without a namespace: %v, want a terminal Invalid error", err)
	}
}

// wake is a wake-up of the object at key with something to look at (as
// a related object's event brings), so that the loop runs the reconciler:
// the tests here call it where the queue would wake the object after a
// change they made (or a requeue it asked for).
func wake[T client.Object](tb testing.TB, l *loop.Loop[T], key types.NamespacedName) (reconcile.Result, error) {
	tb.Helper()
	req := reconcile.Request{NamespacedName: key}
	l.MarkNews(req)
	return l.Reconcile(tb.Context(), req)
}
