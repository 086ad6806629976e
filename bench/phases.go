package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kopgo/kopgo/apply"
	"github.com/kopgo/kopgo/test/widget"
)

// measure runs one variant through one round at N=n, and returns its Go
// benchmarks (none for the raw floor).
func (e *env) measure(ctx context.Context, v variant, n, round int) (sample, goBenches, error) {
	var s sample
	var gb goBenches
	ns := fmt.Sprintf("bench-%s-%d-%d", strings.ToLower(v.key), n, round)
	parents, err := e.createParents(ctx, ns, n)
	if err != nil {
		return s, gb, err
	}
	defer e.cleanup(ns)
	obs, err := startObserver(ctx, e.cluster.Config, ns, n)
	if err != nil {
		return s, gb, err
	}
	defer obs.stop()

	if v.setup == nil {
		s, err := e.measureRaw(ctx, obs, parents)
		return s, gb, err
	}
	name := func(phase string) string { return ns + "-" + phase }

	// Converge from empty.
	w0, err := serverWrites(ctx, e.cs)
	if err != nil {
		return s, gb, err
	}
	stopProfile := func() {}
	if e.o.convergeProfile != "" {
		if stopProfile, err = startCPUProfile(e.o.convergeProfile, fmt.Sprintf("%s-%d-%d.converge", v.key, n, round)); err != nil {
			return s, gb, err
		}
	}
	cpu0 := processCPU()
	m, err := e.startManager(ctx, ns, false, v, name("converge"))
	if err != nil {
		stopProfile()
		return s, gb, err
	}
	if err := waitClosed(ctx, obs.converged, 30*time.Minute, "converge"); err != nil {
		stopProfile()
		m.stop()
		return s, gb, err
	}
	s.convergeWall = time.Since(m.started)
	stopProfile()
	if e.o.verbose {
		logf("%s converged in %s: %s", v.key, s.convergeWall.Round(time.Millisecond), m.act.summary())
	}
	if _, err := m.act.waitQuiet(ctx, n); err != nil {
		m.stop()
		return s, gb, err
	}
	s.converge = m.traffic.snapshot()
	s.convergeCPU, s.convergeWriteMean = processCPU()-cpu0, m.traffic.writeMean()
	s.convergeReconciles = m.act.callsTotal()
	// Each manager's controller has a name of its own: its count starts
	// at 0.
	s.deferrals = int64(deferrals(m.act.controller))
	if e.o.verbose {
		logf("%s idle: %s; requests %d, writes %d, events %d; %s", v.key, m.act.summary(), s.converge.requests, s.converge.writes, s.converge.events, m.traffic.latencies())
	}
	m.stop()
	w1, err := serverWrites(ctx, e.cs)
	if err != nil {
		return s, gb, err
	}
	s.convergeServer = w1 - w0

	// No-op resync after a restart.
	before, err := e.versions(ctx, ns)
	if err != nil {
		return s, gb, err
	}
	m, err = e.startManager(ctx, ns, false, v, name("resync"))
	if err != nil {
		return s, gb, err
	}
	defer func() {
		if m != nil {
			m.stop()
		}
	}()
	last, err := m.act.waitQuiet(ctx, n)
	if err != nil {
		return s, gb, err
	}
	s.resyncWall = last.Sub(m.started)
	s.resync = m.traffic.snapshot()
	w2, err := serverWrites(ctx, e.cs)
	if err != nil {
		return s, gb, err
	}
	s.resyncServer = w2 - w1
	after, err := e.versions(ctx, ns)
	if err != nil {
		return s, gb, err
	}
	for k, rv := range before {
		if after[k] != rv {
			s.resyncChanged++
		}
	}

	// Change latency, one parent after the other.
	s.latency, err = e.changes(ctx, obs, m, parents, func(ctx context.Context, w, before *widget.Widget) error {
		return e.admin.Patch(ctx, w, client.MergeFrom(before))
	})
	if err != nil {
		return s, gb, err
	}

	// Reconciles per change, and what each costs.
	if s.ownWrites, err = e.ownWrites(ctx, m, parents); err != nil {
		return s, gb, err
	}

	s.deferrals += int64(deferrals(m.act.controller))

	// One reconcile of a converged parent, every round (the median is
	// reported); for kopgo's loop also a wake-up with nothing new.
	if v.bench != nil {
		if err := m.act.waitQuietAgain(ctx); err != nil {
			return s, gb, err
		}
		b, err := e.goBenchmark(ctx, m, v, n, round, parents[len(parents)/2], opConverged)
		if err != nil {
			return s, gb, err
		}
		gb.converged = &b
		if v.isKopgo() {
			b, err := e.goBenchmark(ctx, m, v, n, round, parents[len(parents)/2], opNothingNew)
			if err != nil {
				return s, gb, err
			}
			gb.nothingNew = &b
		}
	}
	m.stop()
	m = nil

	// Heap, each reading on a manager of its own, started afresh.
	s.heap, err = e.measureHeap(ctx, v, ns, n)
	return s, gb, err
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
	cpu0 := processCPU()
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
	s.convergeCPU, s.convergeWriteMean = processCPU()-cpu0, t.writeMean()
	w1, err := serverWrites(ctx, e.cs)
	if err != nil {
		return s, err
	}
	s.convergeServer = w1 - w0
	s.latency, err = e.changes(ctx, obs, nil, parents, func(ctx context.Context, w, _ *widget.Widget) error {
		return rawChange(ctx, c, w)
	})
	return s, err
}

// createParents creates the namespace and N Widgets, with the admin client,
// before anything is measured.
func (e *env) createParents(ctx context.Context, ns string, n int) ([]*widget.Widget, error) {
	if err := e.admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return nil, err
	}
	parents := make([]*widget.Widget, n)
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
	act.traffic = t
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
		// Its HTTP connections would idle on for a minute and a half,
		// holding their buffers: the heap's "kept after stop" counts
		// what outlives the manager, and they need not.
		mgr.GetHTTPClient().CloseIdleConnections()
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

// processCPU returns the CPU time (user and system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
