// Command bench measures kopgo's controllers against baselines in the same
// run, on a local control plane (etcd and kube-apiserver from test/testkit),
// and prints a markdown table (also written to bench/RESULTS.md):
//
//	make bench                          # N=500 parents, 3 rounds
//	BENCH_N=2000 BENCH_ROUNDS=5 make bench
//	go run ./bench -n 50 -rounds 1 -out ''   # a quick look, nothing written
//
// The workload: N Widgets (test/widget's CRD, with a status subresource),
// each with three children (ConfigMap, Secret, Service) that carry its
// spec.size, and a status with a Ready condition and observedGeneration; 4
// workers; no client-side rate limit. Five variants reconcile it, each in
// its own namespace with its own controller-runtime manager:
//
//	A  the raw-write floor: a plain client creates the children and writes
//	   the status, with the same concurrency, no reads
//	B  an idiomatic kubebuilder reconciler: controllerutil.CreateOrUpdate per
//	   child, then Status().Update
//	C  a careful hand-written one: reads from the cache, server-side applies
//	   a child only when it differs, patches status only when it changed
//	D  kopgo's reconciler.Reconciler with env.Applier, on controller.Builder
//	   (which also records events; counted apart)
//	E  kopgo's reconciler.Sync returning the three children
//
// Rounds interleave the variants (each round in a rotated order) and every
// figure is reported as the median and the minimum over rounds. See
// bench/README.md for what each figure measures and how.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kopgo/kopgo/apply"
	kopcontroller "github.com/kopgo/kopgo/controller"
	"github.com/kopgo/kopgo/internal/childindex"
	"github.com/kopgo/kopgo/internal/loop"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/test/testkit"
	"github.com/kopgo/kopgo/test/widget"
)

// workers is every controller's MaxConcurrentReconciles, and the raw
// floor's number of writers.
const workers = 4

type options struct {
	n, rounds, changes int
	out, profile       string
	benchtime          time.Duration
	verbose            bool
	// convergeProfile is a directory for a CPU profile of each converge.
	convergeProfile string
	// only are the keys of the variants to run ("" for all).
	only string
}

func main() {
	testing.Init()
	var o options
	flag.IntVar(&o.n, "n", envInt("BENCH_N", 500), "parents per variant (BENCH_N)")
	flag.IntVar(&o.rounds, "rounds", envInt("BENCH_ROUNDS", 3), "rounds; each runs every variant once (BENCH_ROUNDS)")
	flag.IntVar(&o.changes, "changes", 30, "parents changed one after the other for the change latency, per round")
	flag.StringVar(&o.out, "out", "RESULTS.md", "file to write the table to ('' for none)")
	flag.DurationVar(&o.benchtime, "benchtime", time.Second, "time of each Go benchmark")
	flag.StringVar(&o.profile, "profile", "", "directory to write each Go benchmark's CPU and allocation profiles to (<variant>.cpu.pprof, <variant>.allocs.pprof)")
	flag.BoolVar(&o.verbose, "v", false, "log each converge's reconciles, results and retries")
	flag.StringVar(&o.convergeProfile, "converge-profile", "", "directory to write a CPU profile of each converge to (<variant>-<round>.converge.pprof)")
	flag.StringVar(&o.only, "variants", "", "keys of the variants to run, such as DE ('' for all)")
	flag.Parse()
	if err := flag.Set("test.benchtime", o.benchtime.String()); err != nil {
		fatal(err)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := run(ctx, o); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// variant is one way of reconciling the workload.
type variant struct {
	key, name string
	// setup registers the controller named name on mgr; nil for the raw
	// floor.
	setup func(mgr manager.Manager, name string, act *activity) error
	// bench returns one reconcile of a converged parent, for the Go
	// benchmark; nil for none.
	bench func(mgr manager.Manager) (reconcile.Reconciler, error)
	// fieldOwner is a kopgo variant's field manager: its manager's cache
	// keeps that managedFields entry only, as kopgo's Builder.Run sets up.
	fieldOwner string
}

func variants() []variant {
	return []variant{
		{key: "A", name: "raw writes (floor)"},
		{
			key: "B", name: "kubebuilder CreateOrUpdate",
			setup: func(mgr manager.Manager, name string, act *activity) error {
				return setupPlain(mgr, name, act.wrap(&kubebuilderReconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme()}))
			},
			bench: func(mgr manager.Manager) (reconcile.Reconciler, error) {
				return &kubebuilderReconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme()}, nil
			},
		},
		{
			key: "C", name: "careful hand-written",
			setup: func(mgr manager.Manager, name string, act *activity) error {
				return setupPlain(mgr, name, act.wrap(&carefulReconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme(), FieldOwner: "bench-c"}))
			},
			bench: func(mgr manager.Manager) (reconcile.Reconciler, error) {
				return &carefulReconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme(), FieldOwner: "bench-c"}, nil
			},
		},
		{
			key: "D", name: "kopgo Reconciler + Applier", fieldOwner: "bench-d",
			setup: func(mgr manager.Manager, name string, act *activity) error {
				return kopcontroller.New[*widget.Widget](name, wrapKopgo[*widget.Widget](act, widgetReconciler{})).
					Owns(&corev1.ConfigMap{}).Owns(&corev1.Secret{}).Owns(&corev1.Service{}).
					FieldOwner("bench-d").Concurrency(workers).Setup(mgr)
			},
			bench: func(mgr manager.Manager) (reconcile.Reconciler, error) {
				return kopgoAdapter(mgr, "bench-d", widgetReconciler{})
			},
		},
		{
			key: "E", name: "kopgo reconciler.Sync", fieldOwner: "bench-e",
			setup: func(mgr manager.Manager, name string, act *activity) error {
				s := syncReconciler()
				// The Builder indexes a Syncer's children by controller, as
				// it would here but for wrapKopgo's wrapper, which hides the
				// Syncer: without the index, Sync lists its children by label,
				// scanning the namespace.
				if err := childindex.Add(context.Background(), mgr.GetFieldIndexer(), s.ChildKinds()); err != nil {
					return err
				}
				// Sync records events: with Setup, the recorder is the
				// caller's to shut down once the manager stopped, or its
				// worker (and through it the manager's cache) outlives the
				// manager and the heap figure counts it as freed memory.
				rec, err := observability.NewRecorder(mgr, name)
				if err != nil {
					return err
				}
				act.afterStop = append(act.afterStop, func() { rec.Shutdown(context.Background()) })
				return kopcontroller.New[*widget.Widget](name, wrapKopgo[*widget.Widget](act, s)).Recorder(rec).
					Owns(&corev1.ConfigMap{}).Owns(&corev1.Secret{}).Owns(&corev1.Service{}).
					FieldOwner("bench-e").Concurrency(workers).Setup(mgr)
			},
			bench: func(mgr manager.Manager) (reconcile.Reconciler, error) {
				return kopgoAdapter(mgr, "bench-e", syncReconciler())
			},
		},
	}
}

// kopgoAdapter builds the reconcile.Reconciler kopgo's Builder would run,
// on mgr's cache, for the Go benchmark.
func kopgoAdapter(mgr manager.Manager, fieldOwner string, r reconciler.Reconciler[*widget.Widget]) (reconcile.Reconciler, error) {
	applier, err := apply.New(mgr.GetConfig(), fieldOwner, apply.WithCluster(mgr))
	if err != nil {
		return nil, err
	}
	env := &reconciler.Env{Client: client.WithFieldOwner(mgr.GetClient(), fieldOwner), Reader: mgr.GetAPIReader(),
		Scheme: mgr.GetScheme(), Applier: applier}
	return loop.New(fieldOwner+"-gobench", env, r, loop.Options{})
}

// wrap counts a controller-runtime reconciler's calls.
func (a *activity) wrap(r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		a.begin(req.Name)
		defer a.end()
		return r.Reconcile(ctx, req)
	})
}

// wrapKopgo counts a kopgo reconciler's calls (the framework's status write
// follows each; waitQuiet's idle window covers it).
func wrapKopgo[T client.Object](a *activity, r reconciler.Reconciler[T]) reconciler.Reconciler[T] {
	return reconciler.Func[T](func(ctx context.Context, obj T, env *reconciler.Env) (reconciler.Action, error) {
		a.begin(obj.GetName())
		defer a.end()
		return r.Reconcile(ctx, obj, env)
	})
}

// sample is what one round measured of one variant.
type sample struct {
	convergeWall                time.Duration
	converge                    trafficCount
	convergeServer              int64
	resyncWall                  time.Duration
	resync                      trafficCount
	resyncServer, resyncChanged int64
	latencies                   []time.Duration
	heapFull, heapStripped      float64 // bytes per parent
}

// goBench is the Go benchmark of one variant.
type goBench struct {
	nsPerOp, allocsPerOp, bytesPerOp, requestsPerOp, writesPerOp float64
}

type env struct {
	cluster *testkit.Cluster
	admin   client.Client
	cs      kubernetes.Interface
	o       options
}

func run(ctx context.Context, o options) error {
	res, err := measureAll(ctx, o)
	if err != nil {
		return err
	}
	fmt.Print(res.table)
	if o.out != "" {
		if err := os.WriteFile(o.out, []byte(res.table), 0o644); err != nil { //nolint:gosec // a results file, meant to be read
			return err
		}
		logf("wrote %s", o.out)
	}
	return nil
}

// results are what one run measured, and its table.
type results struct {
	samples map[string][]sample
	benches map[string]goBench
	table   string
}

// measureAll starts the control plane, runs every variant o.rounds times
// and renders the table.
func measureAll(ctx context.Context, o options) (results, error) {
	start := time.Now()
	ctrl.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
	load0 := loadavg()
	logf("starting the control plane (N=%d, %d rounds)", o.n, o.rounds)
	cluster, err := testkit.Start(ctx, widget.TestkitOptions())
	if err != nil {
		return results{}, err
	}
	defer cluster.Stop()
	cs, err := kubernetes.NewForConfig(cluster.Config)
	if err != nil {
		return results{}, err
	}
	e := &env{cluster: cluster, admin: cluster.Client(), cs: cs, o: o}

	vs := variants()
	if o.only != "" {
		vs = slices.DeleteFunc(vs, func(v variant) bool { return !strings.Contains(strings.ToUpper(o.only), v.key) })
	}
	res := results{samples: map[string][]sample{}, benches: map[string]goBench{}}
	for round := range o.rounds {
		for i := range vs {
			v := vs[(i+round)%len(vs)]
			logf("round %d/%d: %s %s", round+1, o.rounds, v.key, v.name)
			s, err := e.measure(ctx, v, round, res.benches)
			if err != nil {
				return results{}, fmt.Errorf("round %d, %s: %w", round+1, v.key, err)
			}
			res.samples[v.key] = append(res.samples[v.key], s)
		}
	}
	res.table = report(vs, res.samples, res.benches, o, load0, loadavg(), time.Since(start))
	logf("done in %s", time.Since(start).Round(time.Second))
	return res, nil
}

// measure runs one variant through one round.
func (e *env) measure(ctx context.Context, v variant, round int, benches map[string]goBench) (sample, error) {
	var s sample
	ns := fmt.Sprintf("bench-%s-%d", string(rune('a'+v.key[0]-'A')), round)
	parents, err := e.createParents(ctx, ns)
	if err != nil {
		return s, err
	}
	defer e.cleanup(ns)
	obs, err := startObserver(ctx, e.cluster.Config, ns, e.o.n)
	if err != nil {
		return s, err
	}
	defer obs.stop()

	if v.setup == nil {
		return e.measureRaw(ctx, obs, parents)
	}
	name := func(phase string) string { return fmt.Sprintf("%s-%d-%s", ns, round, phase) }

	// Converge from empty.
	w0, err := serverWrites(ctx, e.cs)
	if err != nil {
		return s, err
	}
	stopProfile := func() {}
	if e.o.convergeProfile != "" {
		if stopProfile, err = startCPUProfile(e.o.convergeProfile, fmt.Sprintf("%s-%d.converge", v.key, round)); err != nil {
			return s, err
		}
	}
	m, err := e.startManager(ctx, ns, false, v, name("converge"))
	if err != nil {
		stopProfile()
		return s, err
	}
	if err := waitClosed(ctx, obs.converged, 10*time.Minute, "converge"); err != nil {
		stopProfile()
		m.stop()
		return s, err
	}
	s.convergeWall = time.Since(m.started)
	stopProfile()
	if e.o.verbose {
		logf("%s converged in %s: %s", v.key, s.convergeWall.Round(time.Millisecond), m.act.summary())
	}
	if _, err := m.act.waitQuiet(ctx, e.o.n); err != nil {
		m.stop()
		return s, err
	}
	s.converge = m.traffic.snapshot()
	if e.o.verbose {
		logf("%s idle: %s; requests %d, writes %d, events %d; %s", v.key, m.act.summary(), s.converge.requests, s.converge.writes, s.converge.events, m.traffic.latencies())
	}
	m.stop()
	w1, err := serverWrites(ctx, e.cs)
	if err != nil {
		return s, err
	}
	s.convergeServer = w1 - w0

	// No-op resync after a restart.
	before, err := e.versions(ctx, ns)
	if err != nil {
		return s, err
	}
	m, err = e.startManager(ctx, ns, false, v, name("resync"))
	if err != nil {
		return s, err
	}
	last, err := m.act.waitQuiet(ctx, e.o.n)
	if err != nil {
		m.stop()
		return s, err
	}
	s.resyncWall = last.Sub(m.started)
	s.resync = m.traffic.snapshot()
	w2, err := serverWrites(ctx, e.cs)
	if err != nil {
		m.stop()
		return s, err
	}
	s.resyncServer = w2 - w1
	after, err := e.versions(ctx, ns)
	if err != nil {
		m.stop()
		return s, err
	}
	for k, rv := range before {
		if after[k] != rv {
			s.resyncChanged++
		}
	}
	heapRunning := heapInUse()

	// Change latency, one parent after the other.
	s.latencies, err = e.changes(ctx, obs, parents, func(ctx context.Context, w, before *widget.Widget) error {
		return e.admin.Patch(ctx, w, client.MergeFrom(before))
	})
	if err != nil {
		m.stop()
		return s, err
	}

	// One reconcile of a converged parent, once per variant.
	if _, done := benches[v.key]; !done && v.bench != nil {
		if err := m.act.waitQuietAgain(ctx); err != nil {
			m.stop()
			return s, err
		}
		b, err := e.goBenchmark(ctx, m, v, parents[len(parents)/2])
		if err != nil {
			m.stop()
			return s, err
		}
		benches[v.key] = b
	}
	m.stop()
	m = nil //nolint:wastedassign // let the manager be collected before the heap is measured
	s.heapFull = perParent(heapRunning, heapInUse(), e.o.n)

	// Heap with managedFields stripped from the cache.
	m, err = e.startManager(ctx, ns, true, v, name("stripped"))
	if err != nil {
		return s, err
	}
	if _, err := m.act.waitQuiet(ctx, e.o.n); err != nil {
		m.stop()
		return s, err
	}
	heapRunning = heapInUse()
	m.stop()
	m = nil //nolint:wastedassign // as above
	s.heapStripped = perParent(heapRunning, heapInUse(), e.o.n)
	return s, nil
}

// measureRaw runs the raw floor: the children and status of every parent
// written by a plain client with the same concurrency, then the children of
// changed parents rewritten directly.
func (e *env) measureRaw(ctx context.Context, obs *observer, parents []*widget.Widget) (sample, error) {
	var s sample
	cfg, t := counted(e.cluster.Config)
	c, err := client.New(cfg, client.Options{Scheme: widget.Scheme()})
	if err != nil {
		return s, err
	}
	w0, err := serverWrites(ctx, e.cs)
	if err != nil {
		return s, err
	}
	started := time.Now()
	if err := parallel(ctx, workers, len(parents), func(ctx context.Context, i int) error {
		return rawWrite(ctx, c, parents[i].DeepCopyObject().(*widget.Widget))
	}); err != nil {
		return s, err
	}
	if err := waitClosed(ctx, obs.converged, 10*time.Minute, "converge"); err != nil {
		return s, err
	}
	s.convergeWall = time.Since(started)
	s.converge = t.snapshot()
	w1, err := serverWrites(ctx, e.cs)
	if err != nil {
		return s, err
	}
	s.convergeServer = w1 - w0
	s.latencies, err = e.changes(ctx, obs, parents, func(ctx context.Context, w, _ *widget.Widget) error {
		return rawChange(ctx, c, w)
	})
	return s, err
}

// createParents creates the namespace and N Widgets, with the admin client,
// before anything is measured.
func (e *env) createParents(ctx context.Context, ns string) ([]*widget.Widget, error) {
	if err := e.admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return nil, err
	}
	parents := make([]*widget.Widget, e.o.n)
	for i := range parents {
		parents[i] = &widget.Widget{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("w-%05d", i), Namespace: ns},
			Spec:       widget.WidgetSpec{Size: int64(i % 100)},
		}
	}
	err := parallel(ctx, 8, len(parents), func(ctx context.Context, i int) error {
		return e.admin.Create(ctx, parents[i])
	})
	return parents, err
}

// cleanup deletes the namespace's objects (a bare control plane has no
// namespace controller to do it) and the namespace.
func (e *env) cleanup(ns string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, obj := range []client.Object{&widget.Widget{}, &corev1.ConfigMap{}, &corev1.Secret{}} {
		if err := e.admin.DeleteAllOf(ctx, obj, client.InNamespace(ns)); err != nil {
			logf("cleanup %s: %v", ns, err)
		}
	}
	var svcs corev1.ServiceList
	if err := e.admin.List(ctx, &svcs, client.InNamespace(ns)); err == nil {
		_ = parallel(ctx, 8, len(svcs.Items), func(ctx context.Context, i int) error {
			return client.IgnoreNotFound(e.admin.Delete(ctx, &svcs.Items[i]))
		})
	}
	if err := e.admin.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		logf("cleanup %s: %v", ns, err)
	}
}

// versions returns the resourceVersion of every parent and child in ns.
func (e *env) versions(ctx context.Context, ns string) (map[string]string, error) {
	out := map[string]string{}
	lists := []client.ObjectList{&widget.WidgetList{}, &corev1.ConfigMapList{}, &corev1.SecretList{}, &corev1.ServiceList{}}
	for _, l := range lists {
		if err := e.admin.List(ctx, l, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		items, err := metaItems(l)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			out[fmt.Sprintf("%T/%s", l, it.GetName())] = it.GetResourceVersion()
		}
	}
	return out, nil
}

func metaItems(l client.ObjectList) ([]metav1.Object, error) {
	var out []metav1.Object
	switch x := l.(type) {
	case *widget.WidgetList:
		for i := range x.Items {
			out = append(out, &x.Items[i])
		}
	case *corev1.ConfigMapList:
		for i := range x.Items {
			out = append(out, &x.Items[i])
		}
	case *corev1.SecretList:
		for i := range x.Items {
			out = append(out, &x.Items[i])
		}
	case *corev1.ServiceList:
		for i := range x.Items {
			out = append(out, &x.Items[i])
		}
	default:
		return nil, fmt.Errorf("unexpected list %T", l)
	}
	return out, nil
}

// changes changes the size of o.changes parents spread over the list, one
// after the other, and returns, for each, the time from the write until its
// three children carried the new value (as a watch sees them).
func (e *env) changes(ctx context.Context, obs *observer, parents []*widget.Widget, change func(ctx context.Context, w, before *widget.Widget) error) ([]time.Duration, error) {
	k := min(e.o.changes, len(parents))
	var out []time.Duration
	for i := range k {
		p := parents[i*len(parents)/k]
		w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}}
		if err := e.admin.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
			return nil, err
		}
		before := w.DeepCopyObject().(*widget.Widget)
		w.Spec.Size += 100
		done := obs.expect(w.Name, wantValue(w.Spec.Size))
		started := time.Now()
		if err := change(ctx, w, before); err != nil {
			return nil, err
		}
		if err := waitClosed(ctx, done, time.Minute, "change of "+w.Name); err != nil {
			return nil, err
		}
		out = append(out, time.Since(started))
	}
	return out, nil
}

// running is one started manager.
type running struct {
	mgr     manager.Manager
	act     *activity
	traffic *traffic
	started time.Time
	stop    func()
}

// startManager starts a manager with the variant's controller, counting
// its requests, with a cache of ns only, optionally stripping managedFields.
func (e *env) startManager(ctx context.Context, ns string, strip bool, v variant, name string) (*running, error) {
	cfg, t := counted(e.cluster.Config)
	copts := cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}
	switch {
	case strip:
		copts.DefaultTransform = cache.TransformStripManagedFields()
	case v.fieldOwner != "":
		copts.DefaultTransform = apply.KeepManagedFields(v.fieldOwner)
	}
	grace := 10 * time.Second
	skip := true
	mgr, err := manager.New(cfg, manager.Options{
		Scheme:                  widget.Scheme(),
		Cache:                   copts,
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
		GracefulShutdownTimeout: &grace,
		Controller:              config.Controller{SkipNameValidation: &skip},
		Logger:                  logr.Discard(),
	})
	if err != nil {
		return nil, err
	}
	act := newActivity(name)
	if err := v.setup(mgr, name, act); err != nil {
		return nil, err
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	r := &running{mgr: mgr, act: act, traffic: t, started: time.Now()}
	go func() { done <- mgr.Start(mctx) }()
	r.stop = func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			logf("manager %s: %v", name, err)
		}
		for _, f := range act.afterStop {
			f()
		}
	}
	return r, nil
}

// waitQuietAgain waits for the controller to be idle again (after changes).
func (a *activity) waitQuietAgain(ctx context.Context) error {
	_, err := a.waitQuiet(ctx, 0)
	return err
}

// goBenchmark runs testing.Benchmark over one reconcile of a converged
// parent, with v's reconciler on m's cache and counted client.
func (e *env) goBenchmark(ctx context.Context, m *running, v variant, p *widget.Widget) (goBench, error) {
	r, err := v.bench(m.mgr)
	if err != nil {
		return goBench{}, err
	}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: p.Name}}
	if e.o.profile != "" {
		stop, err := startProfile(e.o.profile, v.key)
		if err != nil {
			return goBench{}, err
		}
		defer stop()
	}
	var ferr error
	var counts trafficCount
	res := testing.Benchmark(func(b *testing.B) {
		b.Helper()
		// The first reconcile fills what the reconciler remembers (kopgo's
		// Applier records); it is not counted.
		if _, err := r.Reconcile(ctx, req); err != nil {
			ferr = err
			b.SkipNow()
		}
		before := m.traffic.snapshot()
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if _, err := r.Reconcile(ctx, req); err != nil {
				ferr = err
				b.SkipNow()
			}
		}
		b.StopTimer()
		counts = m.traffic.snapshot().sub(before)
		b.ReportMetric(float64(counts.requests)/float64(b.N), "requests/op")
		b.ReportMetric(float64(counts.writes)/float64(b.N), "writes/op")
	})
	if ferr != nil {
		return goBench{}, fmt.Errorf("go benchmark: %w", ferr)
	}
	if res.N == 0 {
		return goBench{}, errors.New("go benchmark did not run")
	}
	return goBench{
		nsPerOp: float64(res.NsPerOp()), allocsPerOp: float64(res.AllocsPerOp()), bytesPerOp: float64(res.AllocedBytesPerOp()),
		requestsPerOp: res.Extra["requests/op"], writesPerOp: res.Extra["writes/op"],
	}, nil
}

func perParent(running, stopped uint64, n int) float64 {
	return (float64(running) - float64(stopped)) / float64(n)
}

func waitClosed(ctx context.Context, ch <-chan struct{}, timeout time.Duration, what string) error {
	select {
	case <-ch:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("%s: not done after %s", what, timeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// parallel runs f(0..n-1) on k goroutines and returns the first error.
func parallel(ctx context.Context, k, n int, f func(context.Context, int) error) error {
	idx := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range k {
		wg.Go(func() {
			for i := range idx {
				if err := f(ctx, i); err != nil && !apierrors.IsAlreadyExists(err) {
					mu.Lock()
					first = cmp.Or(first, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		idx <- i
	}
	close(idx)
	wg.Wait()
	return first
}

// startProfile starts a CPU profile and returns a function that stops it
// and writes the allocation profile, both into dir named after the variant.
// The allocation profile counts from the program's start: the one written
// before (<variant>.allocs.base.pprof) is its -base for go tool pprof.
func startProfile(dir, key string) (func(), error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	writeAllocs(filepath.Join(dir, key+".allocs.base.pprof"))
	cpu, err := os.Create(filepath.Join(dir, key+".cpu.pprof"))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		_ = cpu.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		_ = cpu.Close()
		writeAllocs(filepath.Join(dir, key+".allocs.pprof"))
	}, nil
}

func writeAllocs(path string) {
	runtime.GC()              // the profile shows allocations up to the last GC
	f, err := os.Create(path) //nolint:gosec // a path from the command line
	if err != nil {
		logf("profile: %v", err)
		return
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		logf("profile: %v", err)
	}
}

// startCPUProfile starts a CPU profile written to dir/name.pprof and
// returns the function that stops it.
func startCPUProfile(dir, name string) (func(), error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(dir, name+".pprof"))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}
