package controller_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kopcontroller "github.com/kopgo/kopgo/controller"
	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

// The annotations the test widgets name their Secrets and ConfigMap in.
const (
	secretRef = "refs.kopgo.dev/secret"
	backupRef = "refs.kopgo.dev/backup-secret"
	configRef = "refs.kopgo.dev/config"
)

func annotated(key string) func(*widget.Widget) []string {
	return func(w *widget.Widget) []string { return []string{w.Annotations[key]} }
}

// calls counts a reconciler's calls per widget.
type calls struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *calls) add(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[name]++
}

func (c *calls) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

// secretUser reconciles a widget by reading, through Env.Client, the
// Secrets and the ConfigMap its annotations name: a missing one, or a
// Secret whose password is "bad", is a terminal failure (Stalled).
func secretUser(c *calls) reconciler.Func[*widget.Widget] {
	return func(ctx context.Context, w *widget.Widget, env *reconciler.Env) (reconciler.Action, error) {
		c.add(w.Name)
		for _, key := range []string{secretRef, backupRef, configRef} {
			name := w.Annotations[key]
			if name == "" {
				continue
			}
			var obj client.Object = &corev1.Secret{}
			if key == configRef {
				obj = &corev1.ConfigMap{}
			}
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: name}, obj); err != nil {
				if apierrors.IsNotFound(err) {
					return reconciler.Done(), koperrors.Terminal(fmt.Errorf("%s %s not found", key, name))
				}
				return reconciler.Done(), err
			}
			if s, ok := obj.(*corev1.Secret); ok && string(s.Data["password"]) == "bad" {
				return reconciler.Done(), koperrors.Terminal(fmt.Errorf("secret %s: bad password", name))
			}
		}
		return reconciler.Done(), nil
	}
}

// request is one request a manager sent.
type request struct {
	method, path, query, accept string
}

// requestLog records the requests of the clients made from its config.
type requestLog struct {
	mu   sync.Mutex
	reqs []request
}

func (l *requestLog) config() *rest.Config {
	cfg := rest.CopyConfig(cluster.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			l.mu.Lock()
			l.reqs = append(l.reqs, request{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Accept")})
			l.mu.Unlock()
			return rt.RoundTrip(r)
		})
	})
	return cfg
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (l *requestLog) matching(f func(request) bool) []request {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []request
	for _, r := range l.reqs {
		if f(r) {
			out = append(out, r)
		}
	}
	return out
}

// secretCollection reports whether r lists or watches Secrets (of all
// namespaces or one), and whether it asked for metadata only.
func secretCollection(r request) (collection, metadataOnly bool) {
	if r.method != http.MethodGet {
		return false, false
	}
	p := r.path
	collection = p == "/api/v1/secrets" || strings.HasPrefix(p, "/api/v1/namespaces/") && strings.HasSuffix(p, "/secrets")
	return collection, strings.Contains(r.accept, "as=PartialObjectMetadata")
}

// controllerRun starts the controller under Run, or under Setup in a
// manager of the test's, with the manager's requests recorded.
func controllerRun(t *testing.T, mode string, b *kopcontroller.Builder[*widget.Widget], ns string) *requestLog {
	t.Helper()
	log := &requestLog{}
	b = b.Scheme(scheme).Recorder(&observability.FakeRecorder{}).LabelSelector("loop=" + ns)
	switch mode {
	case "Run":
		run(t, b.Config(log.config()))
	case "Setup":
		mgr, err := manager.New(log.config(), manager.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Setup(mgr); err != nil {
			t.Fatal(err)
		}
		startManager(t, mgr)
	}
	return log
}

func stalledIs(t *testing.T, w *widget.Widget) func() error {
	t.Helper()
	return func() error {
		got := getWidget(t, w)
		if !status.IsTrue(got, status.Stalled) {
			return fmt.Errorf("not Stalled: %+v", got.Status.Conditions)
		}
		return nil
	}
}

// latency waits, polling every 5 ms, until cond holds, and returns how
// long that took since start.
func latency(t *testing.T, start time.Time, what string, cond func() error) time.Duration {
	t.Helper()
	deadline := start.Add(30 * time.Second)
	for {
		err := cond()
		if err == nil {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within 30s: %v", what, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func setPassword(t *testing.T, ns, name, password string) time.Time {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{"password": []byte(password)}}
	err := cluster.Client().Update(t.Context(), s)
	if apierrors.IsNotFound(err) {
		err = cluster.Client().Create(t.Context(), s)
	}
	if err != nil {
		t.Fatal(err)
	}
	return time.Now()
}

// A widget that names a Secret: missing (Stalled), created after it (Ready
// within a second), changed to a bad one (Stalled), fixed (Ready), deleted
// (Stalled again); each change reaches the widget at once, through the
// metadata-only watch, under Run and Setup alike. The reconciler reads the
// Secret through Env.Client, and each read is a request to the API server:
// no informer ever lists or watches the Secrets' data.
func TestReferencedSecretWakesItsPrimary(t *testing.T) {
	for _, mode := range []string{"Run", "Setup"} {
		t.Run(mode, func(t *testing.T) {
			ns := cluster.Namespace(t)
			c := &calls{}
			b := kopcontroller.New[*widget.Widget](fmt.Sprintf("refs-%s-%d", strings.ToLower(mode), completeRuns.Add(1)), secretUser(c)).
				References(&corev1.Secret{}, annotated(secretRef))
			requests := controllerRun(t, mode, b, ns)

			w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w", Labels: map[string]string{"loop": ns},
				Annotations: map[string]string{secretRef: "creds"}}}
			if err := cluster.Client().Create(t.Context(), w); err != nil {
				t.Fatal(err)
			}
			eventually(t, 30*time.Second, "Stalled on the missing Secret", stalledIs(t, w))

			steps := []struct {
				what   string
				change func() time.Time
				want   func() error
			}{
				{"Secret created: Ready", func() time.Time { return setPassword(t, ns, "creds", "ok") }, readyIs(t, w, metav1.ConditionTrue, "")},
				{"Secret bad: Stalled", func() time.Time { return setPassword(t, ns, "creds", "bad") }, stalledIs(t, w)},
				{"Secret fixed: Ready", func() time.Time { return setPassword(t, ns, "creds", "ok") }, readyIs(t, w, metav1.ConditionTrue, "")},
				{"Secret deleted: Stalled", func() time.Time {
					if err := cluster.Client().Delete(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "creds"}}); err != nil {
						t.Fatal(err)
					}
					return time.Now()
				}, stalledIs(t, w)},
			}
			for _, s := range steps {
				d := latency(t, s.change(), s.what, s.want)
				t.Logf("%s: %s after the change", s.what, d.Round(time.Millisecond))
				if d > time.Second {
					t.Errorf("%s took %s, want within 1s", s.what, d)
				}
			}

			// Every reconcile read the Secret with one get of it from the
			// API server, typed (not from a cache).
			gets := requests.matching(func(r request) bool {
				return r.method == http.MethodGet && r.path == "/api/v1/namespaces/"+ns+"/secrets/creds"
			})
			if n := c.snapshot()["w"]; len(gets) != n || n < 5 {
				t.Errorf("%d gets of the Secret for %d reconciles; want one each, and at least 5 reconciles", len(gets), n)
			}
			var metadata int
			for _, r := range requests.matching(func(r request) bool { coll, _ := secretCollection(r); return coll }) {
				if _, meta := secretCollection(r); !meta {
					t.Errorf("a list or watch of Secrets with their data: %s %s?%s (Accept %q)", r.method, r.path, r.query, r.accept)
				} else {
					metadata++
				}
			}
			if metadata == 0 {
				t.Error("no metadata-only list or watch of Secrets: what does the watch use?")
			}
		})
	}
}

// 50 widgets name 5 Secrets, 10 each: changing one Secret reconciles its
// 10 widgets once each and no other (not even one in another namespace
// that names a Secret of the same name there); a widget that names
// another Secret is woken by its new one, not its old one.
func TestReferencesReconcileExactlyTheNamers(t *testing.T) {
	ns := cluster.Namespace(t)
	c := &calls{}
	b := kopcontroller.New[*widget.Widget](fmt.Sprintf("refs-fanout-%d", completeRuns.Add(1)), secretUser(c)).
		References(&corev1.Secret{}, annotated(secretRef)).Concurrency(4)
	controllerRun(t, "Setup", b, ns)
	for i := range 5 {
		setPassword(t, ns, fmt.Sprintf("s%d", i), "ok")
	}
	widgets := make([]*widget.Widget, 50)
	for i := range widgets {
		widgets[i] = &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("w%02d", i), Labels: map[string]string{"loop": ns},
			Annotations: map[string]string{secretRef: fmt.Sprintf("s%d", i%5)}}}
		if err := cluster.Client().Create(t.Context(), widgets[i]); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range widgets {
		eventually(t, 30*time.Second, w.Name+" Ready", readyIs(t, w, metav1.ConditionTrue, ""))
	}
	// A widget in another namespace names an s2 of its own, which does
	// not exist: the s2 of the first namespace must not wake it.
	elsewhere := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: cluster.Namespace(t), Name: "elsewhere", Labels: map[string]string{"loop": ns},
		Annotations: map[string]string{secretRef: "s2"}}}
	if err := cluster.Client().Create(t.Context(), elsewhere); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the widget elsewhere Stalled", stalledIs(t, elsewhere))
	// Reconciles since before, once they have settled.
	settle := func() map[string]int {
		t.Helper()
		prev := c.snapshot()
		for {
			time.Sleep(time.Second)
			cur := c.snapshot()
			if fmt.Sprint(cur) == fmt.Sprint(prev) {
				return cur
			}
			prev = cur
		}
	}
	diff := func(before, after map[string]int) map[string]int {
		d := map[string]int{}
		for k, v := range after {
			if v != before[k] {
				d[k] = v - before[k]
			}
		}
		return d
	}
	namers := func(secret string, except ...string) map[string]int {
		want := map[string]int{}
		for _, w := range widgets {
			if w.Annotations[secretRef] == secret && !slices.Contains(except, w.Name) {
				want[w.Name] = 1
			}
		}
		return want
	}
	check := func(what string, got, want map[string]int) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: reconciles %v, want %v", what, got, want)
		} else {
			t.Logf("%s: %d widgets reconciled once each, no other", what, len(got))
		}
	}

	before := settle()
	start := setPassword(t, ns, "s2", "changed")
	// All ten are reconciled within a second.
	d := latency(t, start, "the namers of s2 reconciled", func() error {
		if n := len(diff(before, c.snapshot())); n < 10 {
			return fmt.Errorf("%d reconciled", n)
		}
		return nil
	})
	t.Logf("the 10 namers of s2 reconciled within %s of its change", d.Round(time.Millisecond))
	check("s2 changed", diff(before, settle()), namers("s2"))

	// w00 names s1 instead of s0.
	before = settle()
	moved := getWidget(t, widgets[0])
	moved.Annotations[secretRef] = "s1"
	if err := cluster.Client().Update(t.Context(), moved); err != nil {
		t.Fatal(err)
	}
	check("w00 renamed its Secret", diff(before, settle()), map[string]int{"w00": 1})
	before = c.snapshot()
	setPassword(t, ns, "s0", "changed")
	check("s0 changed after w00 left it", diff(before, settle()), namers("s0", "w00"))
	before = c.snapshot()
	setPassword(t, ns, "s1", "changed")
	want := namers("s1")
	want["w00"] = 1
	check("s1 changed after w00 came", diff(before, settle()), want)
}

// Several References compose: two Secrets named by two annotations (one
// kind, two name functions) and a ConfigMap (another kind). The widget is
// Ready once all three exist, and a change of each wakes it.
func TestSeveralReferences(t *testing.T) {
	ns := cluster.Namespace(t)
	c := &calls{}
	b := kopcontroller.New[*widget.Widget](fmt.Sprintf("refs-several-%d", completeRuns.Add(1)), secretUser(c)).
		References(&corev1.Secret{}, annotated(secretRef)).
		References(&corev1.Secret{}, annotated(backupRef)).
		References(&corev1.ConfigMap{}, annotated(configRef))
	requests := controllerRun(t, "Run", b, ns)
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w", Labels: map[string]string{"loop": ns},
		Annotations: map[string]string{secretRef: "main", backupRef: "backup", configRef: "config"}}}
	if err := cluster.Client().Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "Stalled", stalledIs(t, w))
	setPassword(t, ns, "main", "ok")
	setPassword(t, ns, "backup", "ok")
	eventually(t, 30*time.Second, "Stalled on the missing ConfigMap", func() error {
		got := getWidget(t, w)
		if c := status.Get(got, status.Stalled); c == nil || !strings.Contains(c.Message, "config not found") {
			return fmt.Errorf("Stalled = %+v", c)
		}
		return nil
	})
	if err := cluster.Client().Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "config"}}); err != nil {
		t.Fatal(err)
	}
	d := latency(t, time.Now(), "Ready", readyIs(t, w, metav1.ConditionTrue, ""))
	t.Logf("Ready %s after the ConfigMap was created", d.Round(time.Millisecond))
	for _, change := range []struct {
		what string
		do   func()
	}{
		{"main Secret", func() { setPassword(t, ns, "main", "bad") }},
		{"backup Secret", func() { setPassword(t, ns, "backup", "bad") }},
	} {
		before := c.snapshot()["w"]
		change.do()
		eventually(t, 5*time.Second, change.what+" wakes the widget", func() error {
			if n := c.snapshot()["w"]; n == before {
				return errors.New("not reconciled")
			}
			return nil
		})
		setPassword(t, ns, "main", "ok")
		setPassword(t, ns, "backup", "ok")
		eventually(t, 5*time.Second, "Ready again", readyIs(t, w, metav1.ConditionTrue, ""))
	}
	// Both kinds read live, and neither cached with its data: ConfigMaps
	// are read with a get each too.
	if gets := requests.matching(func(r request) bool {
		return r.method == http.MethodGet && r.path == "/api/v1/namespaces/"+ns+"/configmaps/config"
	}); len(gets) == 0 {
		t.Error("the ConfigMap was not read from the API server")
	}
	for _, r := range requests.matching(func(r request) bool {
		return r.method == http.MethodGet && (strings.HasSuffix(r.path, "/configmaps") || strings.HasSuffix(r.path, "/secrets"))
	}) {
		if !strings.Contains(r.accept, "as=PartialObjectMetadata") {
			t.Errorf("a list or watch with data: %s?%s", r.path, r.query)
		}
	}
}

// References' mistakes are Config errors from Setup and Run, never panics.
func TestReferencesMistakes(t *testing.T) {
	type unregistered struct{ corev1.Secret }
	names := annotated(secretRef)
	for _, tc := range []struct {
		name string
		b    func(*kopcontroller.Builder[*widget.Widget]) *kopcontroller.Builder[*widget.Widget]
		want string
	}{
		{"nil kind", func(b *kopcontroller.Builder[*widget.Widget]) *kopcontroller.Builder[*widget.Widget] {
			return b.References(nil, names)
		}, "the kind is nil"},
		{"typed nil kind", func(b *kopcontroller.Builder[*widget.Widget]) *kopcontroller.Builder[*widget.Widget] {
			return b.References((*corev1.Secret)(nil), names)
		}, "the kind is nil"},
		{"nil names", func(b *kopcontroller.Builder[*widget.Widget]) *kopcontroller.Builder[*widget.Widget] {
			return b.References(&corev1.Secret{}, nil)
		}, "the name function is nil"},
		{"not in the scheme", func(b *kopcontroller.Builder[*widget.Widget]) *kopcontroller.Builder[*widget.Widget] {
			return b.References(&unregistered{}, names)
		}, "no kind is registered"},
		{"own kind", func(b *kopcontroller.Builder[*widget.Widget]) *kopcontroller.Builder[*widget.Widget] {
			return b.References(&widget.Widget{}, names)
		}, "the controller's own kind Widget"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, mode := range []string{"Run", "Setup"} {
				b := tc.b(kopcontroller.New[*widget.Widget](fmt.Sprintf("refs-mistake-%d", completeRuns.Add(1)), secretUser(&calls{})).
					Scheme(scheme).Config(cluster.Config))
				var err error
				if mode == "Run" {
					ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
					err = b.Run(ctx)
					cancel()
				} else {
					err = b.Setup(newManager(t))
				}
				if err == nil || !strings.Contains(err.Error(), tc.want) || koperrors.KindOf(err) != koperrors.Config {
					t.Errorf("%s: err = %v (kind %v), want a Config error with %q", mode, err, koperrors.KindOf(err), tc.want)
				}
			}
		})
	}
}

// A cluster-scoped primary names cluster-scoped objects: a Tenant naming
// its Namespace is Stalled until the Namespace exists and Ready within a
// second of its creation. A namespaced kind for a cluster-scoped primary
// could never be named, and Setup refuses it.
func TestReferencesOfAClusterScopedPrimary(t *testing.T) {
	installTenantCRD(t)
	tscheme := widget.Scheme()
	if err := widget.AddTenantToScheme(tscheme); err != nil {
		t.Fatal(err)
	}
	newMgr := func() manager.Manager {
		mgr, err := manager.New(cluster.Config, manager.Options{Scheme: tscheme, Metrics: metricsserver.Options{BindAddress: "0"}})
		if err != nil {
			t.Fatal(err)
		}
		return mgr
	}
	nsOf := func(tn *widget.Tenant) []string { return []string{tn.Spec.Namespace} }
	r := reconciler.Func[*widget.Tenant](func(ctx context.Context, tn *widget.Tenant, env *reconciler.Env) (reconciler.Action, error) {
		if err := env.Client.Get(ctx, client.ObjectKey{Name: tn.Spec.Namespace}, &corev1.Namespace{}); err != nil {
			if apierrors.IsNotFound(err) {
				return reconciler.Done(), koperrors.Terminal(fmt.Errorf("namespace %s not found", tn.Spec.Namespace))
			}
			return reconciler.Done(), err
		}
		return reconciler.Done(), nil
	})

	err := kopcontroller.New[*widget.Tenant](fmt.Sprintf("refs-tenant-bad-%d", completeRuns.Add(1)), r).
		References(&corev1.Secret{}, nsOf).Setup(newMgr())
	if err == nil || !strings.Contains(err.Error(), "names cluster-scoped objects only") || koperrors.KindOf(err) != koperrors.Config {
		t.Errorf("Setup of a cluster-scoped primary referencing Secrets: %v, want a Config error", err)
	}

	label := cluster.Namespace(t) // a unique label value
	mgr := newMgr()
	if err := kopcontroller.New[*widget.Tenant](fmt.Sprintf("refs-tenant-%d", completeRuns.Add(1)), r).
		Recorder(&observability.FakeRecorder{}).LabelSelector("loop="+label).
		References(&corev1.Namespace{}, nsOf).Setup(mgr); err != nil {
		t.Fatal(err)
	}
	startManager(t, mgr)
	c, err := client.New(cluster.Config, client.Options{Scheme: tscheme})
	if err != nil {
		t.Fatal(err)
	}
	tn := &widget.Tenant{ObjectMeta: metav1.ObjectMeta{Name: label, Labels: map[string]string{"loop": label}}, Spec: widget.TenantSpec{Namespace: label + "-home"}}
	if err := c.Create(t.Context(), tn); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), tn)
		_ = c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tn.Spec.Namespace}})
	})
	tenantCond := func(typ string) func() error {
		return func() error {
			var got widget.Tenant
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(tn), &got); err != nil {
				return err
			}
			if !status.IsTrue(&got, typ) {
				return fmt.Errorf("%s not True: %+v", typ, got.Status.Conditions)
			}
			return nil
		}
	}
	eventually(t, 30*time.Second, "Stalled on the missing Namespace", tenantCond(status.Stalled))
	if err := c.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tn.Spec.Namespace}}); err != nil {
		t.Fatal(err)
	}
	d := latency(t, time.Now(), "Ready once the Namespace exists", tenantCond(status.Ready))
	t.Logf("Tenant Ready %s after its Namespace was created", d.Round(time.Millisecond))
	if d > time.Second {
		t.Errorf("Ready took %s, want within 1s", d)
	}
}

// installTenantCRD installs the Tenant CRD for the test and removes it
// afterwards.
func installTenantCRD(t *testing.T) {
	t.Helper()
	c := cluster.Client()
	crd := widget.TenantCRD()
	if err := c.Create(t.Context(), crd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.Delete(ctx, crd); client.IgnoreNotFound(err) != nil {
			t.Errorf("delete CRD: %v", err)
			return
		}
		err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			err := c.Get(ctx, client.ObjectKeyFromObject(crd), &apiextensionsv1.CustomResourceDefinition{})
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
		if err != nil {
			t.Errorf("CRD %s not gone: %v", crd.Name, err)
		}
	})
	eventually(t, 20*time.Second, "the Tenant CRD established", func() error {
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(crd), crd); err != nil {
			return err
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		return errors.New("not established")
	})
}
