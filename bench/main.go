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
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
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
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
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
	// scale are the numbers of parents to measure at, each with its rounds.
	scale           []scalePoint
	changes, writes int
	out, chart      string
	profile         string
	benchtime       time.Duration
	verbose         bool
	heapRepeats     int
	// convergeProfile is a directory for a CPU profile of each converge.
	convergeProfile string
	// only are the keys of the variants to run ("" for all).
	only string
}

// scalePoint is one N of the scale and the rounds measured at it.
type scalePoint struct{ n, rounds int }

// parseScale reads a list such as "500,2000,5000:1": parents per variant,
// each optionally with its own number of rounds after a colon (rounds
// otherwise).
func parseScale(list string, rounds int) ([]scalePoint, error) {
	var out []scalePoint
	for f := range strings.SplitSeq(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		ns, rs, hasRounds := strings.Cut(f, ":")
		n, err := strconv.Atoi(ns)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("scale %q: %q is not a positive number of parents", list, ns)
		}
		p := scalePoint{n: n, rounds: rounds}
		if hasRounds {
			if p.rounds, err = strconv.Atoi(rs); err != nil || p.rounds < 1 {
				return nil, fmt.Errorf("scale %q: %q is not a positive number of rounds", list, rs)
			}
		}
		if slices.ContainsFunc(out, func(q scalePoint) bool { return q.n == n }) {
			return nil, fmt.Errorf("scale %q: %d twice", list, n)
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("scale %q: no N", list)
	}
	slices.SortFunc(out, func(a, b scalePoint) int { return a.n - b.n })
	return out, nil
}

func main() {
	testing.Init()
	var o options
	scale := flag.String("scale", envString("BENCH_SCALE", "500,2000,5000"),
		"parents per variant, one measurement per N, in a list such as 500,2000,5000 (BENCH_SCALE); N:r measures that N in r rounds")
	rounds := flag.Int("rounds", envInt("BENCH_ROUNDS", 3), "rounds at each N without its own; each runs every variant once (BENCH_ROUNDS)")
	flag.IntVar(&o.changes, "changes", 100, "parents changed one after the other for the change latency, per round")
	flag.IntVar(&o.writes, "own-writes", 10, "parents changed one at a time, each until the controller is idle, to count the reconciles a change causes, per round")
	flag.IntVar(&o.heapRepeats, "heap-repeats", 2, "heap measurements per round (each on a freshly started manager)")
	flag.StringVar(&o.out, "out", "RESULTS.md", "file to write the table to ('' for none)")
	flag.StringVar(&o.chart, "chart", "", "file to draw the scale chart in (PNG); default: scale.png beside -out, none without -out")
	flag.DurationVar(&o.benchtime, "benchtime", time.Second, "time of each Go benchmark")
	flag.StringVar(&o.profile, "profile", "", "directory to write each Go benchmark's CPU and allocation profiles to (<variant>-<N>.cpu.pprof, <variant>-<N>.allocs.pprof), and the heap profile of the first heap reading (<variant>-<N>.heap.pprof)")
	flag.BoolVar(&o.verbose, "v", false, "log each converge's reconciles, results and retries")
	flag.StringVar(&o.convergeProfile, "converge-profile", "", "directory to write a CPU profile of each converge to (<variant>-<N>-<round>.converge.pprof)")
	flag.StringVar(&o.only, "variants", "", "keys of the variants to run, such as DE ('' for all)")
	memRate := flag.Int("memprofilerate", 0, "runtime.MemProfileRate for the heap profiles (-profile): 1 records every allocation, exact but slow (it distorts the CPU figures); 0 keeps Go's default")
	flag.Parse()
	if *memRate > 0 {
		runtime.MemProfileRate = *memRate
	}
	var err error
	if o.scale, err = parseScale(*scale, *rounds); err != nil {
		fatal(err)
	}
	if o.chart == "" && o.out != "" {
		o.chart = filepath.Join(filepath.Dir(o.out), "scale.png")
	}
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

func envString(name, def string) string {
	if v := os.Getenv(name); v != "" {
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

// isKopgo reports whether v runs on kopgo's loop (D and E): its wake-ups
// with nothing new run none of the reconciler's code, and are counted in
// kopgo_reconcile_skipped_total.
func (v variant) isKopgo() bool { return v.fieldOwner != "" }

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
				if err := childindex.Add(context.Background(), mgr.GetCache(), s.ChildKinds()); err != nil {
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
				// The manager's cache holds every object of the namespace,
				// where the children live: complete, so Sync creates a
				// child without reading its name live first.
				return kopcontroller.New[*widget.Widget](name, wrapKopgo[*widget.Widget](act, s)).Recorder(rec).
					Owns(&corev1.ConfigMap{}).Owns(&corev1.Secret{}).Owns(&corev1.Service{}).
					CompleteCache(&corev1.ConfigMap{}, &corev1.Secret{}, &corev1.Service{}).
					FieldOwner("bench-e").Concurrency(workers).Setup(mgr)
			},
			bench: func(mgr manager.Manager) (reconcile.Reconciler, error) {
				return kopgoAdapter(mgr, "bench-e", syncReconciler())
			},
		},
	}
}

// kopgoAdapter builds the loop kopgo's Builder would run (a
// reconcile.Reconciler), on mgr's cache, for the Go benchmark. It returns
// the loop itself: the benchmark marks news on it (Loop.MarkNews) to time
// a reconcile that runs the reconciler's code.
func kopgoAdapter(mgr manager.Manager, fieldOwner string, r reconciler.Reconciler[*widget.Widget]) (*loop.Loop[*widget.Widget], error) {
	applier, err := apply.New(mgr.GetConfig(), fieldOwner, apply.WithCluster(mgr))
	if err != nil {
		return nil, err
	}
	env := &reconciler.Env{Client: client.WithFieldOwner(mgr.GetClient(), fieldOwner), Reader: mgr.GetAPIReader(),
		Scheme: mgr.GetScheme(), Applier: applier}
	return loop.New(gobenchName(fieldOwner), env, r, loop.Options{})
}

// gobenchName is the controller name of the loop kopgoAdapter builds (its
// label in kopgo's metrics).
func gobenchName(fieldOwner string) string { return fieldOwner + "-gobench" }

// wrap counts a controller-runtime reconciler's calls.
func (a *activity) wrap(r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		defer a.end(a.begin(req.Name))
		return r.Reconcile(ctx, req)
	})
}

// wrapKopgo counts a kopgo reconciler's calls (the framework's status write
// follows each; waitQuiet's idle window covers it).
func wrapKopgo[T client.Object](a *activity, r reconciler.Reconciler[T]) reconciler.Reconciler[T] {
	return reconciler.Func[T](func(ctx context.Context, obj T, env *reconciler.Env) (reconciler.Action, error) {
		defer a.end(a.begin(obj.GetName()))
		return r.Reconcile(ctx, obj, env)
	})
}

// sample is what one round measured of one variant at one N.
type sample struct {
	convergeWall time.Duration
	converge     trafficCount
	// convergeCPU is the CPU time this process (controller, watch,
	// clients) used from the start until idle; convergeWriteMean the mean
	// time of a write request meanwhile (the API server's answer time as
	// the client sees it).
	convergeCPU, convergeWriteMean time.Duration
	convergeServer                 int64
	// convergeReconciles is how many times the reconciler's code ran
	// until idle, all parents together; deferrals the reads kopgo's loop
	// put off for a lagging cache in the whole round.
	convergeReconciles, deferrals int64
	resyncWall                    time.Duration
	resync                        trafficCount
	resyncServer, resyncChanged   int64
	latency                       latencySample
	ownWrites                     []ownWrite
	heap                          heapSample
}

// goBenches are one round's Go benchmarks of one variant: one reconcile
// of a converged parent, and (kopgo's variants) a wake-up with nothing
// new; nil where not measured.
type goBenches struct {
	converged, nothingNew *goBench
}

// goBench is one Go benchmark of one variant.
type goBench struct {
	nsPerOp, allocsPerOp, bytesPerOp, requestsPerOp, writesPerOp float64
	// skippedPerOp is kopgo_reconcile_skipped_total's growth per op, for
	// kopgo's loop (loop is true): 0 when every op ran the reconciler's
	// code, 1 when none did.
	skippedPerOp float64
	loop         bool
	// nsMin and nsMax are the range of ns/op over the rounds, runs their
	// number.
	nsMin, nsMax float64
	runs         int
	// cpuTop and allocTop are the profile's top functions (see topOf).
	cpuTop, allocTop []profileEntry
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
	points []point
	table  string
}

// point is what one N of the scale measured.
type point struct {
	n, rounds int
	samples   map[string][]sample
	// benches is each variant's Go benchmark of one reconcile of a
	// converged parent (opConverged), wakes kopgo's variants' one of a
	// wake-up with nothing new (opNothingNew): the round whose ns/op is
	// the median, with the range over the rounds.
	benches, wakes map[string]goBench
}

// measureAll starts the control plane, runs every variant at each N of the
// scale, in that N's rounds, and renders the table.
func measureAll(ctx context.Context, o options) (results, error) {
	start := time.Now()
	ctrl.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
	load0 := loadavg()
	logf("starting the control plane (scale %s)", scaleString(o.scale))
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
	var res results
	for _, sp := range o.scale {
		p := point{n: sp.n, rounds: sp.rounds, samples: map[string][]sample{}, benches: map[string]goBench{}, wakes: map[string]goBench{}}
		runs, wakeRuns := map[string][]goBench{}, map[string][]goBench{}
		for round := range sp.rounds {
			for i := range vs {
				v := vs[(i+round)%len(vs)]
				logf("N=%d round %d/%d: %s %s", sp.n, round+1, sp.rounds, v.key, v.name)
				s, gb, err := e.measure(ctx, v, sp.n, round)
				if err != nil {
					return results{}, fmt.Errorf("at %d parents, round %d, %s: %w", sp.n, round+1, v.key, err)
				}
				p.samples[v.key] = append(p.samples[v.key], s)
				if gb.converged != nil {
					runs[v.key] = append(runs[v.key], *gb.converged)
				}
				if gb.nothingNew != nil {
					wakeRuns[v.key] = append(wakeRuns[v.key], *gb.nothingNew)
				}
			}
		}
		for k, r := range runs {
			p.benches[k] = medianBench(r)
		}
		for k, r := range wakeRuns {
			p.wakes[k] = medianBench(r)
		}
		res.points = append(res.points, p)
	}
	res.table = report(vs, res.points, o, load0, loadavg(), time.Since(start))
	if o.chart != "" && len(res.points) > 1 {
		if err := drawChart(o.chart, vs, res.points); err != nil {
			return results{}, err
		}
		logf("drew %s", o.chart)
	}
	logf("done in %s", time.Since(start).Round(time.Second))
	return res, nil
}

// medianBench returns the run whose ns/op is the median (the lower of the
// two middle ones for an even count), with the range over all runs: one
// run on a shared machine moved the careful reconciler from 48 to 68 µs.
func medianBench(runs []goBench) goBench {
	sorted := slices.Clone(runs)
	slices.SortFunc(sorted, func(a, b goBench) int { return cmp.Compare(a.nsPerOp, b.nsPerOp) })
	m := sorted[(len(sorted)-1)/2]
	m.nsMin, m.nsMax, m.runs = sorted[0].nsPerOp, sorted[len(sorted)-1].nsPerOp, len(sorted)
	return m
}

// scaleString is the scale as the flag spells it.
func scaleString(scale []scalePoint) string {
	out := make([]string, len(scale))
	for i, p := range scale {
		out[i] = fmt.Sprintf("%d:%d", p.n, p.rounds)
	}
	return strings.Join(out, ",")
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
