package reconciler_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kopgo/kopgo/apply"
	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/internal/loop"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/testkit"
	"github.com/kopgo/kopgo/test/widget"
)

// get reads obj's current version from the API server into obj.
func get(t *testing.T, obj client.Object) {
	t.Helper()
	if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatalf("get %s: %v", obj.GetName(), err)
	}
}

// inNs returns obj with its namespace set.
func inNs[O client.Object](ns string, obj O) O {
	obj.SetNamespace(ns)
	return obj
}

// gone waits until the manager's cache no longer holds obj.
func (h *syncHarness) gone(obj client.Object) {
	h.t.Helper()
	err := wait.PollUntilContextTimeout(h.t.Context(), 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		err := h.env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object))
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		h.t.Fatalf("%s %s still in the cache: %v", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
	}
}

func (h *syncHarness) reconcileResult() reconcile.Result {
	h.t.Helper()
	h.settle() // see reconcile
	res, err := wake(h.t, h.adapter, client.ObjectKeyFromObject(h.w))
	if err != nil {
		h.t.Fatalf("Reconcile: %v", err)
	}
	return res
}

// conditionOf renders a condition "Status/Reason: message", or "-".
func conditionOf(w *widget.Widget, t string) string {
	c := status.Get(w, t)
	if c == nil {
		return "-"
	}
	return string(c.Status) + "/" + c.Reason + ": " + c.Message
}

// Someone edits a field Sync sets (kubectl edit): the next sync takes it
// back, a field Sync does not set stays, and later changes keep arriving.
func TestSyncRevertsDrift(t *testing.T) {
	h := newSyncHarness(t, []client.Object{&corev1.ConfigMap{}})
	var mu sync.Mutex
	v := "1"
	h.setDesired(func(*widget.Widget) []client.Object {
		mu.Lock()
		defer mu.Unlock()
		return []client.Object{configMap("c", map[string]string{"v": v})}
	})
	h.reconcile()
	cm := inNs(h.ns, configMap("c", nil))
	get(t, cm)
	cm.Data["v"] = "edited"
	cm.Data["theirs"] = "kept"
	if err := cluster.Client().Update(t.Context(), cm, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}
	h.settle(cm)

	h.reconcile()
	get(t, cm)
	if diff := cmp.Diff(map[string]string{"v": "1", "theirs": "kept"}, cm.Data); diff != "" {
		t.Errorf("after the edit and a sync (-want +got):\n%s", diff)
	}
	h.settle(cm)
	mu.Lock()
	v = "2"
	mu.Unlock()
	h.reconcile()
	get(t, cm)
	if cm.Data["v"] != "2" {
		t.Errorf("a later change did not reach the edited child: data %v", cm.Data)
	}
	if w := h.getWidget(); !status.IsTrue(w, status.Ready) {
		t.Errorf("parent Ready = %s, want True", conditionOf(w, status.Ready))
	}
}

// A desired child whose name is taken by an object the parent does not
// control is refused and left untouched, naming the object and its
// controller; the other children are applied.
func TestSyncRefusesObjectsItDidNotCreate(t *testing.T) {
	h := newSyncHarness(t, []client.Object{&corev1.ConfigMap{}})
	other := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "other"}}
	if err := cluster.Client().Create(t.Context(), other); err != nil {
		t.Fatal(err)
	}
	orphan := inNs(h.ns, configMap("orphan", map[string]string{"theirs": "1"}))
	controlled := inNs(h.ns, configMap("controlled", map[string]string{"theirs": "1"}))
	controlled.OwnerReferences = []metav1.OwnerReference{{APIVersion: widget.GroupVersion.String(), Kind: "Widget", Name: "other", UID: other.UID, Controller: new(true)}}
	for _, o := range []client.Object{orphan, controlled} {
		if err := cluster.Client().Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	h.settle(orphan, controlled)
	h.setDesired(func(*widget.Widget) []client.Object {
		return []client.Object{configMap("orphan", map[string]string{"mine": "1"}), configMap("controlled", nil), configMap("fresh", nil)}
	})
	h.reconcile() // terminal: reported in status

	w := h.getWidget()
	stalled := status.Get(w, status.Stalled)
	if stalled == nil || stalled.Status != metav1.ConditionTrue || stalled.Reason != "Invalid" {
		t.Fatalf("Stalled = %s, want True/Invalid", conditionOf(w, status.Stalled))
	}
	for _, want := range []string{
		"desired child ConfigMap " + h.ns + "/controlled: the object of that name is controlled by Widget other (uid " + string(other.UID) + ")",
		"desired child ConfigMap " + h.ns + "/orphan: the object of that name has no controller",
		"never takes over an object it did not create",
	} {
		if !strings.Contains(stalled.Message, want) {
			t.Errorf("Stalled message %q does not contain %q", stalled.Message, want)
		}
	}
	for _, o := range []*corev1.ConfigMap{orphan, controlled} {
		got := o.DeepCopy()
		get(t, got)
		if got.ResourceVersion != o.ResourceVersion {
			t.Errorf("ConfigMap %s was written: owners %v, labels %v, data %v", o.Name, got.OwnerReferences, got.Labels, got.Data)
		}
	}
	get(t, inNs(h.ns, configMap("fresh", nil)))
}

// The refusal does not depend on the cache: an object the cache does not
// hold (yet, or ever: a cache restricted by labels) is found live, with a
// get (the API server answers it from etcd at once; a consistent list
// waits for its watch cache to catch up, tens of milliseconds while other
// writes stream in), or with a list by name by an operator that may not
// get.
func TestSyncRefusesObjectTheCacheDoesNotHold(t *testing.T) {
	tests := []struct {
		name          string
		verbs         []string // on ConfigMaps, for the live reader
		used, notUsed string   // permissions the live reads needed, and did not
		denied        int      // refused requests: the get of a list-only reader, once
	}{
		{"may get", []string{"get", "list"}, "/configmaps get", "/configmaps list", 0},
		{"may only list", []string{"list"}, "/configmaps list", "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newSyncHarness(t, []client.Object{&corev1.ConfigMap{}})
			orphans := []*corev1.ConfigMap{
				inNs(h.ns, configMap("orphan", map[string]string{"theirs": "1"})),
				inNs(h.ns, configMap("orphan-2", map[string]string{"theirs": "2"})),
			}
			for _, o := range orphans {
				if err := cluster.Client().Create(t.Context(), o); err != nil {
					t.Fatal(err)
				}
			}
			reader, perms := readerWith(t, h.ns, tt.verbs)
			env := *h.env
			env.Client, env.Reader = hidingClient{Client: h.env.Client}, reader
			r := reconciler.Sync([]client.Object{&corev1.ConfigMap{}}, func(context.Context, *widget.Widget, reconciler.Children) ([]client.Object, reconciler.Action, error) {
				return []client.Object{configMap("orphan", map[string]string{"mine": "1"}), configMap("orphan-2", map[string]string{"mine": "2"})}, reconciler.Done(), nil
			})
			for range 2 { // the second time, a list-only reader lists at once
				_, err := r.Reconcile(t.Context(), h.getWidget(), &env)
				if !koperrors.IsTerminal(err) || !strings.Contains(err.Error(), "ConfigMap "+h.ns+"/orphan: the object of that name has no controller") ||
					!strings.Contains(err.Error(), "ConfigMap "+h.ns+"/orphan-2: the object of that name has no controller") {
					t.Errorf("Reconcile = %v, want the terminal refusal of both", err)
				}
			}
			for _, o := range orphans {
				got := o.DeepCopy()
				get(t, got)
				if got.ResourceVersion != o.ResourceVersion {
					t.Errorf("orphan %s was written: owners %v, labels %v", o.Name, got.OwnerReferences, got.Labels)
				}
			}
			used := fmt.Sprint(perms.Used())
			if !strings.Contains(used, tt.used) || (tt.notUsed != "" && strings.Contains(used, tt.notUsed)) {
				t.Errorf("live reads needed %s, want %s and not %q", used, tt.used, tt.notUsed)
			}
			if got := perms.Denied(); len(got) != tt.denied {
				t.Errorf("refused live reads: %q, want %d", got, tt.denied)
			}
		})
	}
}

// readerWith returns a client reading as a user that has verbs on
// ConfigMaps in ns, and the record of the permissions its requests needed.
func readerWith(t *testing.T, ns string, verbs []string) (client.Reader, *testkit.Permissions) {
	t.Helper()
	user := "reader-" + ns
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "reader", Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: verbs}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "reader", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	for _, o := range []client.Object{role, binding} {
		if err := cluster.Client().Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	userCfg, err := cluster.UserConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	cfg, perms := testkit.RecordPermissions(userCfg)
	c, err := client.New(cfg, client.Options{Scheme: cluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c, perms
}

// An object created by someone else between Sync's look and its apply (the
// window server-side apply leaves open) is taken over by the apply; the
// Applier sees it (a 200 for an object it did not create), and Sync removes
// its controller reference and label again. When the Applier's own cache
// shows the object by then, the apply is refused before anything is
// written.
func TestSyncDisownsObjectCreatedWhileItCreated(t *testing.T) {
	for _, applierSees := range []bool{false, true} {
		t.Run(fmt.Sprintf("applier sees it: %t", applierSees), func(t *testing.T) {
			h := newSyncHarness(t, []client.Object{&corev1.ConfigMap{}})
			theirs := inNs(h.ns, configMap("contested", map[string]string{"theirs": "1"}))
			if err := cluster.Client().Create(t.Context(), theirs, client.FieldOwner("someone")); err != nil {
				t.Fatal(err)
			}
			env := *h.env
			env.Client, env.Reader = hidingClient{Client: h.env.Client}, blindReader{} // neither sees it: as if it was created just after
			if applierSees {
				h.settle(theirs)
			} else {
				applier, err := apply.New(cluster.Config, "sync-test", apply.WithScheme(cluster.Scheme()), apply.WithCache(env.Client))
				if err != nil {
					t.Fatal(err)
				}
				env.Applier = applier
			}
			r := reconciler.Sync([]client.Object{&corev1.ConfigMap{}}, func(context.Context, *widget.Widget, reconciler.Children) ([]client.Object, reconciler.Action, error) {
				return []client.Object{configMap("contested", map[string]string{"mine": "1"})}, reconciler.Done(), nil
			})
			w := h.getWidget()
			_, err := r.Reconcile(t.Context(), w, &env)
			got := theirs.DeepCopy()
			get(t, got)
			if applierSees {
				// A taken name is one verdict wherever it is met: the
				// Applier's refusal is terminal (Stalled) as Sync's own.
				if err == nil || !koperrors.IsTerminal(err) || !strings.Contains(err.Error(), `the object exists, written by "someone", and has no controller`) {
					t.Errorf("Reconcile = %v, want the Applier's terminal refusal naming the writer", err)
				}
				if got.ResourceVersion != theirs.ResourceVersion {
					t.Errorf("the object was written: owners %v, labels %v, data %v", got.OwnerReferences, got.Labels, got.Data)
				}
				return
			}
			if err == nil || koperrors.IsTerminal(err) || koperrors.KindOf(err) != koperrors.Conflict || !strings.Contains(err.Error(), `created by "someone" while Sync was creating it`) {
				t.Errorf("Reconcile = %v, want a retryable Conflict naming the other field manager", err)
			}
			if metav1.IsControlledBy(got, w) || len(got.OwnerReferences) > 0 || got.Labels[ownerLabel] != "" {
				t.Errorf("the object keeps Sync's claim: owners %v, labels %v", got.OwnerReferences, got.Labels)
			}
			if got.Data["theirs"] != "1" {
				t.Errorf("the object's own data was lost: %v", got.Data)
			}
		})
	}
}

// hidingClient is a client whose Get finds nothing, like a cache that does
// not hold an object yet.
type hidingClient struct{ client.Client }

func (c hidingClient) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	return apierrors.NewNotFound(schema.GroupResource{Resource: obj.GetObjectKind().GroupVersionKind().Kind}, key.Name)
}

// blindReader finds nothing.
type blindReader struct{ client.Reader }

func (blindReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	return apierrors.NewNotFound(schema.GroupResource{Resource: obj.GetObjectKind().GroupVersionKind().Kind}, key.Name)
}

func (blindReader) List(context.Context, client.ObjectList, ...client.ListOption) error { return nil }

// An orphan is adopted when asked, for the child or for its kind; an object
// controlled by another parent never is.
func TestSyncAdoptsOrphansOnlyWhenAsked(t *testing.T) {
	tests := []struct {
		name      string
		kind      client.Object
		child     func(client.Object) client.Object
		wantAdopt bool
	}{
		{"default", &corev1.ConfigMap{}, func(o client.Object) client.Object { return o }, false},
		{"per child", &corev1.ConfigMap{}, func(o client.Object) client.Object { return reconciler.Child(o, reconciler.AdoptOrphans(true)) }, true},
		{"per kind", reconciler.Child(&corev1.ConfigMap{}, reconciler.AdoptOrphans(true)), func(o client.Object) client.Object { return o }, true},
		{"kind yes, child no", reconciler.Child(&corev1.ConfigMap{}, reconciler.AdoptOrphans(true)),
			func(o client.Object) client.Object { return reconciler.Child(o, reconciler.AdoptOrphans(false)) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newSyncHarness(t, []client.Object{tt.kind})
			other := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: "other"}}
			if err := cluster.Client().Create(t.Context(), other); err != nil {
				t.Fatal(err)
			}
			orphan := inNs(h.ns, configMap("orphan", map[string]string{"theirs": "1"}))
			controlled := inNs(h.ns, configMap("controlled", nil))
			controlled.OwnerReferences = []metav1.OwnerReference{{APIVersion: widget.GroupVersion.String(), Kind: "Widget", Name: "other", UID: other.UID, Controller: new(true)}}
			for _, o := range []client.Object{orphan, controlled} {
				if err := cluster.Client().Create(t.Context(), o); err != nil {
					t.Fatal(err)
				}
			}
			h.settle(orphan, controlled)
			h.setDesired(func(*widget.Widget) []client.Object {
				return []client.Object{tt.child(configMap("orphan", map[string]string{"mine": "1"})), tt.child(configMap("controlled", nil))}
			})
			h.reconcile()

			w := h.getWidget()
			got := orphan.DeepCopy()
			get(t, got)
			if adopted := metav1.IsControlledBy(got, w); adopted != tt.wantAdopt {
				t.Errorf("orphan adopted = %v, want %v (owners %v)", adopted, tt.wantAdopt, got.OwnerReferences)
			}
			if tt.wantAdopt {
				if diff := cmp.Diff(map[string]string{"theirs": "1", "mine": "1"}, got.Data); diff != "" || got.Labels[ownerLabel] != "w" {
					t.Errorf("adopted orphan: labels %v, data (-want +got):\n%s", got.Labels, diff)
				}
			}
			gotControlled := controlled.DeepCopy()
			get(t, gotControlled)
			if gotControlled.ResourceVersion != controlled.ResourceVersion {
				t.Errorf("an object controlled by another parent was written: owners %v", gotControlled.OwnerReferences)
			}
			if msg := conditionOf(w, status.Stalled); !strings.Contains(msg, "controlled by Widget other") {
				t.Errorf("Stalled = %s, want the refusal of the controlled object", msg)
			}
		})
	}
}

func job(name, image string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "c", Image: image}},
		}}},
	}
}

func service(name, clusterIP string, port int32) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{
			ClusterIP: clusterIP,
			Selector:  map[string]string{"app": name},
			Ports:     []corev1.ServicePort{{Name: "http", Port: port, TargetPort: intstr.FromInt32(8080)}},
		},
	}
}

// A change the API server refuses as immutable recreates a Recreate child:
// deleted (the parent Reconciling, a requeue rather than a wait), then
// created with the new spec once gone. A Job's template; a Service turned
// headless (clusterIP may not change once set).
func TestSyncRecreatesOnImmutableChange(t *testing.T) {
	tests := []struct {
		name      string
		kind      client.Object
		before    client.Object
		after     client.Object
		wantCause string
		check     func(t *testing.T, obj client.Object)
	}{
		{"Job template", reconciler.Child(&batchv1.Job{}, reconciler.Recreate), job("j", "busybox:1"), job("j", "busybox:2"),
			"spec.template: field is immutable", func(t *testing.T, obj client.Object) {
				t.Helper()
				if img := obj.(*batchv1.Job).Spec.Template.Spec.Containers[0].Image; img != "busybox:2" {
					t.Errorf("recreated Job's image = %s, want busybox:2", img)
				}
			}},
		{"Service clusterIP", &corev1.Service{}, service("s", "", 80), reconciler.Child(service("s", "None", 80), reconciler.Recreate),
			"may not change once set", func(t *testing.T, obj client.Object) {
				t.Helper()
				if ip := obj.(*corev1.Service).Spec.ClusterIP; ip != "None" {
					t.Errorf("recreated Service's clusterIP = %s, want None", ip)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newSyncHarness(t, []client.Object{tt.kind})
			var mu sync.Mutex
			desired := tt.before
			h.setDesired(func(*widget.Widget) []client.Object {
				mu.Lock()
				defer mu.Unlock()
				return []client.Object{desired}
			})
			h.reconcile()
			unwrapped := tt.before.DeepCopyObject().(client.Object)
			unwrapped.SetNamespace(h.ns)
			old := unwrapped.DeepCopyObject().(client.Object)
			get(t, old)
			h.settle(old)

			mu.Lock()
			desired = tt.after
			mu.Unlock()
			res := h.reconcileResult()
			w := h.getWidget()
			if got := conditionOf(w, status.Reconciling); !strings.HasPrefix(got, "True/Recreating:") || !strings.Contains(got, tt.wantCause) {
				t.Errorf("Reconciling = %s, want True/Recreating naming %q", got, tt.wantCause)
			}
			if res.RequeueAfter <= 0 {
				t.Errorf("Reconcile = %+v, want a requeue while the old child goes", res)
			}
			h.gone(old)
			h.reconcile()
			now := old.DeepCopyObject().(client.Object)
			get(t, now)
			if now.GetUID() == old.GetUID() {
				t.Fatalf("the child was not recreated (same UID %s)", now.GetUID())
			}
			tt.check(t, now)
			var notes []string
			for _, e := range h.events.Events() {
				notes = append(notes, e.Note)
			}
			ref := strings.Join([]string{h.ns, unwrapped.GetName()}, "/")
			if !anyContains(notes, "deleted to recreate") || !anyContains(notes, "created") || !anyContains(notes, ref) {
				t.Errorf("events %q: want one naming the deletion to recreate and one the creation of %s", notes, ref)
			}
		})
	}
}

func anyContains(ss []string, sub string) bool {
	for _, s := range ss {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// A Recreate child whose new version is invalid for another reason than an
// immutable field keeps its working predecessor; so does an InPlace child
// whose change is immutable.
func TestSyncRecreateKeepsChildOnOtherRefusals(t *testing.T) {
	tests := []struct {
		name  string
		after client.Object
		want  string
	}{
		{"invalid port", reconciler.Child(service("s", "", 70000), reconciler.Recreate), "spec.ports[0].port"},
		{"immutable, InPlace", service("s", "None", 80), "may not change once set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newSyncHarness(t, []client.Object{&corev1.Service{}})
			var mu sync.Mutex
			var desired client.Object = service("s", "", 80)
			h.setDesired(func(*widget.Widget) []client.Object {
				mu.Lock()
				defer mu.Unlock()
				return []client.Object{desired}
			})
			h.reconcile()
			old := inNs(h.ns, service("s", "", 80))
			get(t, old)
			h.settle(old)
			mu.Lock()
			desired = tt.after
			mu.Unlock()
			_, err := wake(t, h.adapter, client.ObjectKeyFromObject(h.w))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Reconcile = %v, want the API server's refusal naming %q", err, tt.want)
			}
			now := old.DeepCopy()
			get(t, now)
			if now.UID != old.UID || now.DeletionTimestamp != nil {
				t.Errorf("the working Service was deleted")
			}
		})
	}
}

// An OnDelete child is left alone, changes and all, until someone deletes
// it; then the new version is created.
func TestSyncOnDeleteWaitsForDeletion(t *testing.T) {
	h := newSyncHarness(t, []client.Object{&corev1.ConfigMap{}})
	var mu sync.Mutex
	v := "1"
	h.setDesired(func(*widget.Widget) []client.Object {
		mu.Lock()
		defer mu.Unlock()
		return []client.Object{reconciler.Child(configMap("od", map[string]string{"v": v}), reconciler.OnDelete)}
	})
	h.reconcile()
	cm := inNs(h.ns, configMap("od", nil))
	get(t, cm)
	h.settle(cm)

	mu.Lock()
	v = "2"
	mu.Unlock()
	h.traffic.Reset()
	h.reconcile()
	if n := h.traffic.Requests.Load(); n != 0 {
		t.Errorf("a sync of an existing OnDelete child sent %d requests, want 0", n)
	}
	got := cm.DeepCopy()
	get(t, got)
	if got.Data["v"] != "1" || got.ResourceVersion != cm.ResourceVersion {
		t.Errorf("the OnDelete child was changed: data %v", got.Data)
	}

	if err := cluster.Client().Delete(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	h.gone(cm)
	h.reconcile()
	get(t, got)
	if got.Data["v"] != "2" || got.UID == cm.UID {
		t.Errorf("after its deletion the OnDelete child is %v (uid %s), want v=2 in a new object", got.Data, got.UID)
	}
}

func deployment(name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
			},
		},
	}
}

// setDeploymentStatus plays the Deployment controller (absent from a bare
// control plane).
func setDeploymentStatus(t *testing.T, ns, name string, set func(d *appsv1.Deployment)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var d appsv1.Deployment
		if err := cluster.Client().Get(t.Context(), types.NamespacedName{Namespace: ns, Name: name}, &d); err != nil {
			return err
		}
		d.Status.ObservedGeneration = d.Generation
		set(&d)
		return cluster.Client().Status().Update(t.Context(), &d)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func rolledOut(d *appsv1.Deployment) {
	d.Status.Replicas, d.Status.UpdatedReplicas, d.Status.ReadyReplicas, d.Status.AvailableReplicas = 1, 1, 1, 1
}

// A child that depends on another is applied only once that one is ready;
// meanwhile the parent is Reconciling, naming both.
func TestSyncDependsOnWaitsForReadiness(t *testing.T) {
	h := newSyncHarness(t, []client.Object{&appsv1.Deployment{}, &corev1.ConfigMap{}})
	db := deployment("db")
	h.setDesired(func(*widget.Widget) []client.Object {
		// The dependent first: Sync orders them.
		return []client.Object{reconciler.Child(configMap("app", nil), reconciler.DependsOn{db}), db}
	})
	h.reconcile()
	app := inNs(h.ns, configMap("app", nil))
	if err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(app), app); !apierrors.IsNotFound(err) {
		t.Fatalf("the dependent child exists before its dependency is ready: %v", err)
	}
	w := h.getWidget()
	want := "True/WaitingForDependency: ConfigMap " + h.ns + "/app waits for Deployment " + h.ns + "/db to be ready"
	if got := conditionOf(w, status.Reconciling); got != want {
		t.Errorf("Reconciling = %s, want %s", got, want)
	}

	setDeploymentStatus(t, h.ns, "db", rolledOut)
	h.settle(inNs(h.ns, deployment("db")))
	h.reconcile()
	get(t, app)
	if w := h.getWidget(); !status.IsTrue(w, status.Ready) || status.Get(w, status.Reconciling) != nil {
		t.Errorf("parent after the dependency is ready: Ready %s, Reconciling %s; want Ready", conditionOf(w, status.Ready), conditionOf(w, status.Reconciling))
	}
}

// The parent's conditions summarise its children: a Deployment rolling out
// makes it Reconciling, one past its progress deadline Ready=False naming
// it, a rolled-out one Ready. A Ready=True the sync function sets stands
// once every child is ready; while one is not, the summary says so.
func TestSyncSummarisesChildReadiness(t *testing.T) {
	h := newSyncHarness(t, []client.Object{&appsv1.Deployment{}, &corev1.ConfigMap{}})
	var mu sync.Mutex
	own := false
	h.setDesired(func(w *widget.Widget) []client.Object {
		mu.Lock()
		defer mu.Unlock()
		if own {
			status.MarkReady(w, "MyOwn", "the sync function decides")
		}
		return []client.Object{deployment("web"), configMap("c", nil)}
	})
	dep := inNs(h.ns, deployment("web"))
	step := func(what, want string, set func(*appsv1.Deployment)) {
		t.Helper()
		if set != nil {
			setDeploymentStatus(t, h.ns, "web", set)
			h.settle(dep)
		}
		h.reconcile()
		w := h.getWidget()
		got := conditionOf(w, status.Ready) + " | " + conditionOf(w, status.Reconciling)
		if !strings.HasPrefix(got, want) {
			t.Errorf("%s: Ready | Reconciling = %s, want prefix %s", what, got, want)
		}
	}
	step("created", "Unknown/ChildProgressing: Deployment web", nil)
	step("past its deadline", "False/ChildFailed: Deployment web", func(d *appsv1.Deployment) {
		d.Status.Replicas, d.Status.UpdatedReplicas = 1, 1
		d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}}
	})
	step("rolled out", "True/ChildrenReady: 2 of 2 children ready: Deployment web: 1 of 1 replicas available; ConfigMap c", func(d *appsv1.Deployment) {
		rolledOut(d)
		d.Status.Conditions = nil
	})
	step("rolling out again", "Unknown/ChildProgressing", func(d *appsv1.Deployment) { d.Status.AvailableReplicas = 0 })
	mu.Lock()
	own = true
	mu.Unlock()
	step("the sync function's own Ready, a child rolling out", "Unknown/ChildProgressing", nil)
	step("the sync function's own Ready, every child ready", "True/MyOwn", rolledOut)
}

// finalizingSync is a Syncer with a Cleanup of its own, done on its third
// call.
type finalizingSync struct {
	*reconciler.Syncer[*widget.Widget]
	calls []int // the observed children count of each call
}

func (f *finalizingSync) Cleanup(ctx context.Context, w *widget.Widget, env *reconciler.Env) (reconciler.Action, error) {
	observed, err := f.Observe(ctx, w, env)
	if err != nil {
		return reconciler.Done(), err
	}
	f.calls = append(f.calls, len(observed))
	if len(f.calls) < 3 {
		return reconciler.RequeueAfter(time.Second), nil
	}
	return reconciler.Done(), nil
}

// A type that embeds a Syncer and defines Cleanup gets a finalizer, and its
// Cleanup runs until it reports done; the parent goes then. A Sync alone
// adds no finalizer.
func TestSyncFinalize(t *testing.T) {
	h := newSyncHarness(t, []client.Object{&corev1.ConfigMap{}})
	h.setDesired(func(*widget.Widget) []client.Object { return []client.Object{configMap("c", nil)} })
	h.reconcile()
	if fins := h.getWidget().Finalizers; len(fins) != 0 {
		t.Errorf("a Sync without a finalize function added finalizers %v", fins)
	}

	r := &finalizingSync{Syncer: reconciler.Sync([]client.Object{&corev1.ConfigMap{}}, h.sync)}
	a, err := loop.New[*widget.Widget]("sync-finalize", h.env, r, loop.Options{})
	if err != nil {
		t.Fatal(err)
	}
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(h.w)}
	if _, err := wake(t, a, req.NamespacedName); err != nil {
		t.Fatal(err)
	}
	w := h.getWidget()
	if len(w.Finalizers) != 1 {
		t.Fatalf("finalizers %v, want the Sync's", w.Finalizers)
	}
	if err := cluster.Client().Delete(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	get(t, w)
	h.settle()
	for i := range 2 {
		res, err := wake(t, a, req.NamespacedName)
		if err != nil || res.RequeueAfter != time.Second {
			t.Fatalf("finalize %d, not done: Reconcile = %+v, %v; want a requeue after 1s", i+1, res, err)
		}
		if err := cluster.Client().Get(t.Context(), req.NamespacedName, &widget.Widget{}); err != nil {
			t.Fatalf("the parent went before its finalize function was done: %v", err)
		}
	}
	if _, err := wake(t, a, req.NamespacedName); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Client().Get(t.Context(), req.NamespacedName, &widget.Widget{}); !apierrors.IsNotFound(err) {
		t.Errorf("after finalize reported done: Get = %v, want NotFound", err)
	}
	if diff := cmp.Diff([]int{1, 1, 1}, r.calls); diff != "" {
		t.Errorf("finalize calls, each with the observed children count (-want +got):\n%s", diff)
	}
}
