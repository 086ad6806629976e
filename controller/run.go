package controller

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"time"

	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/kopgo/kopgo/apply"
	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/internal/childindex"
	"github.com/kopgo/kopgo/internal/loop"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
)

// Setup adds the controller to an existing manager.
func (b *Builder[T]) Setup(mgr manager.Manager) error {
	return b.setup(mgr, false)
}

func (b *Builder[T]) setup(mgr manager.Manager, ownManager bool) error {
	if b.watcher != nil && !ownManager {
		b.errs = append(b.errs, fmt.Errorf("controller %q: WatcherConfig needs Run; configure the manager's cache yourself with Setup", b.name))
	}
	if err := b.err(); err != nil {
		return err
	}
	metrics := b.metrics
	if metrics == nil {
		var err error
		if metrics, err = observability.Default(); err != nil {
			return err
		}
	}
	owns, err := b.ownedKinds(mgr.GetScheme())
	if err != nil {
		return err
	}
	if o, ok := b.r.(reconciler.Owner); ok {
		if err := childindex.Add(context.Background(), mgr.GetCache(), o.ChildKinds()); err != nil {
			return koperrors.WrapKind(koperrors.Config, err, "controller "+b.name, kopmeta.ObjectRef{})
		}
	}
	proto := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
	refGVKs, err := b.refGVKs(mgr.GetScheme(), proto)
	if err != nil {
		return err
	}
	// The Applier reads only the kinds the controller watches from the
	// cache (see EnvFor), and counts its outcomes under the controller's
	// name; the recorder, unless given, reports as the field owner, writes
	// through the manager's client and is flushed when the manager stops
	// (and by Run once it has stopped). A Syncer trusts the cache's "not
	// found" for the complete kinds: in a manager Run built, every kind
	// but a filtered own kind (see CompleteCache).
	complete, err := b.completeKinds(mgr.GetScheme(), proto, owns, ownManager)
	if err != nil {
		return err
	}
	env, err := EnvFor(mgr, b.fieldOwner, WithName(b.name), WithMetrics(metrics), WithRecorder(b.recorder),
		WithCachedKinds(append(append([]client.Object{proto}, owns...), b.watchedKinds()...)...), WithCompleteCache(complete...))
	if err != nil {
		return err
	}
	if b.recorder == nil {
		b.ownRecorder, _ = env.Recorder.(*observability.EventRecorder)
	}
	// Referenced kinds are read live (see References): under Run the
	// manager's client was made so; under Setup the Env's client routes
	// them to the uncached reader.
	if !ownManager {
		env.Client = newLiveReads(env.Client, mgr.GetAPIReader(), mgr.GetScheme(),
			b.liveKinds(mgr.GetScheme(), refGVKs, append(append([]client.Object{proto}, owns...), b.watchedKinds()...)))
	}
	refHandlers, err := b.setupReferences(mgr, proto, refGVKs)
	if err != nil {
		return err
	}
	lo := b.loop
	lo.Metrics = metrics
	lo.Selector = b.selector
	lo.APIServer = mgr.GetConfig().Host
	// The user's own filter on the primary's events may let status
	// changes through on purpose: then every new version is news.
	lo.EveryVersion = b.predicates != nil
	if grace := b.grace(ownManager); grace > 0 {
		lo.Drain = drainWindow(grace)
	}
	l, err := loop.New(b.name, env, b.r, lo)
	if err != nil {
		return err
	}
	// Once the manager stops, the controller's objects leave its health
	// gauges, which outlive it (the default metrics are the process's).
	if err := mgr.Add(l.Forgetter()); err != nil {
		return koperrors.WrapKind(koperrors.Config, err, "controller "+b.name, kopmeta.ObjectRef{})
	}
	// Every event reaches the queue, and the loop decides there and in
	// the reconcile what it means (internal/loop, wake.go): For names the
	// kind, and its events come through the loop's handler, under the
	// primary's filter (ignoreStatusOnly unless replaced) in one list
	// (each builder.WithPredicates replaces the ones before it). No
	// selector predicate: the loop checks LabelSelector itself, after
	// reading the object, and must see the events of an object that left
	// the selector while its cleanup is owed (under Run the cache holds
	// only matching objects anyway).
	preds := b.predicates
	if preds == nil {
		preds = []predicate.Predicate{ignoreStatusOnly()}
	}
	copts := b.ctrlOptions
	if copts.MaxConcurrentReconciles == 0 {
		copts.MaxConcurrentReconciles = max(b.concurrency, 1)
	}
	bld := builder.ControllerManagedBy(mgr).Named(b.name).
		For(proto, builder.WithPredicates(predicate.NewPredicateFuncs(func(client.Object) bool { return false }))).
		Watches(proto, l.PrimaryHandler(), builder.WithPredicates(preds...)).
		WithOptions(l.ControllerOptions(copts)).
		// Deletions the API server let past the finalizer still get their
		// cleanup (kubernetes/kubernetes#77988).
		Watches(proto, l.DeleteHandler(), builder.WithPredicates(deletesOnly()))
	for _, o := range owns {
		gvk, err := apiutil.GVKForObject(o, mgr.GetScheme())
		if err != nil {
			return koperrors.WrapKind(koperrors.Config, err, fmt.Sprintf("controller %q: Owns(%T)", b.name, o), kopmeta.ObjectRef{})
		}
		// Children reconcile their controller owner; the state the
		// owner's reconcile got back from the Applier is no news to it.
		owner := handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), proto, handler.OnlyControllerOwner())
		bld = bld.Watches(o, l.OwnsHandler(gvk.GroupKind(), owner))
	}
	for _, w := range b.watches {
		bld = bld.Watches(w.obj, handler.EnqueueRequestsFromMapFunc(w.mapper))
	}
	// Metadata-only: the names of the referenced objects, not their data.
	for i, r := range b.refs {
		bld = bld.WatchesMetadata(r.kind, refHandlers[i])
	}
	for _, f := range b.raw {
		f(bld)
	}
	if err := bld.Complete(l); err != nil {
		return err
	}
	if b.webhooks == nil {
		return nil
	}
	ready, err := b.setupWebhooks(mgr)
	if err != nil {
		return err
	}
	b.webhooks.ready = ready
	// Run's probe server asks b.webhooks.ready itself; your manager's
	// /readyz gets a check of its own.
	if !ownManager {
		if err := mgr.AddReadyzCheck("webhooks-"+b.name, ready); err != nil {
			return koperrors.WrapKind(koperrors.Config, err, fmt.Sprintf("controller %q: Webhooks: readiness check", b.name), kopmeta.ObjectRef{})
		}
	}
	return nil
}

// Run builds a manager (from Config, or the kubeconfig or in-cluster
// configuration), adds the controller and blocks until ctx ends and
// shutdown finishes.
func (b *Builder[T]) Run(ctx context.Context) error {
	if err := b.err(); err != nil {
		return err
	}
	cfg := b.config
	if cfg == nil {
		var err error
		if cfg, err = ctrl.GetConfig(); err != nil {
			return koperrors.WrapKind(koperrors.Config, err, "load kubeconfig", kopmeta.ObjectRef{})
		}
	}
	scheme := b.scheme
	if scheme == nil {
		scheme = clientgoscheme.Scheme
	}
	opts := manager.Options{
		Scheme: scheme,
		Metrics: metricsserver.Options{
			BindAddress: addr(b.metricsPort), SecureServing: true, FilterProvider: filters.WithAuthenticationAndAuthorization,
		},
		LeaderElection:                b.leaderName != "",
		LeaderElectionNamespace:       b.leaderNamespace,
		LeaderElectionID:              b.leaderName,
		LeaderElectionReleaseOnCancel: true,
	}
	if b.metricsOptions != nil {
		b.metricsOptions(&opts.Metrics)
	}
	grace := b.grace(true)
	opts.GracefulShutdownTimeout = &grace
	if b.lease > 0 {
		opts.LeaseDuration, opts.RenewDeadline, opts.RetryPeriod = &b.lease, &b.renew, &b.retry
	}
	if b.selector != nil || b.watcher != nil {
		var byObject cache.ByObject
		if b.watcher != nil {
			byObject = *b.watcher
		}
		if b.selector != nil {
			byObject.Label = b.selector
		}
		proto := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
		opts.Cache.ByObject = map[client.Object]cache.ByObject{proto: byObject}
	}
	// The reconciler reads the objects it references live, one get each:
	// no informer holds their data (see References).
	if len(b.refs) > 0 {
		proto := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
		refGVKs, err := b.refGVKs(scheme, proto)
		if err != nil {
			return err
		}
		owns, err := b.ownedKinds(scheme)
		if err != nil {
			return err
		}
		if live := b.liveKinds(scheme, refGVKs, append(append([]client.Object{proto}, owns...), b.watchedKinds()...)); len(live) > 0 {
			opts.Client.Cache = &client.CacheOptions{DisableFor: live}
		}
	}
	// Cached objects keep only this controller's managedFields entry: what
	// the Applier needs to prove an apply unchanged after a restart (0
	// requests), and less heap than everyone's entries.
	opts.Cache.DefaultTransform = apply.KeepManagedFields(b.fieldOwner)
	mgr, err := manager.New(cfg, opts)
	if err != nil {
		return koperrors.Wrap(err, "create manager", kopmeta.ObjectRef{})
	}
	if b.healthPort >= 0 {
		// Ready once the caches synced and the API server answers, and,
		// with Webhooks, once they serve with a published CA.
		ready := joinReady(readiness(mgr), func(r *http.Request) error {
			if b.webhooks != nil && b.webhooks.ready != nil {
				return b.webhooks.ready(r)
			}
			return nil
		})
		if err := mgr.Add(&probeServer{addr: addr(b.healthPort), ready: ready}); err != nil {
			return err
		}
	}
	if err := b.setup(mgr, true); err != nil {
		return err
	}
	err = mgr.Start(ctx)
	if b.ownRecorder != nil {
		// Events recorded while the reconciles drained: their counts too,
		// within 2 s, so that a slow API server cannot hold the exit.
		flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		b.ownRecorder.Shutdown(flushCtx)
		cancel()
	}
	return err
}

// grace is the graceful-shutdown window: as set, or controller-runtime's
// default when the Builder runs its own manager; 0 for an existing manager
// whose window the Builder cannot know.
func (b *Builder[T]) grace(ownManager bool) time.Duration {
	switch {
	case b.gracefulShutdown > 0:
		return b.gracefulShutdown
	case ownManager:
		return defaultGracefulShutdown
	}
	return 0
}

// drainWindow is how long in-flight reconciles keep their context within a
// graceful-shutdown window of grace: all but the last 5 s (or its second
// half, if shorter than 10 s), which remain for recording outcomes.
func drainWindow(grace time.Duration) time.Duration {
	if grace >= 10*time.Second {
		return grace - 5*time.Second
	}
	return grace / 2
}
