package external

import (
	"context"
	"errors"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
)

// defaultPeriod is how often a Reconciler checks an external resource for
// drift unless [WithPeriod] says otherwise.
const defaultPeriod = 5 * time.Minute

// visibilityGrace is how long, at most, after its create a resource the
// system does not show yet is taken for one it has not made visible yet
// (an eventually consistent API), rather than one deleted behind the
// operator's back: a minute, or the period if shorter.
const visibilityGrace = time.Minute

// The reasons of the Reconciler's events and conditions.
const (
	reasonCreated        = "Created"
	reasonUpdated        = "Updated"
	reasonDriftCorrected = "DriftCorrected"
	reasonDeleted        = "Deleted"
	reasonProvisioning   = "Provisioning"
	reasonDeleting       = "Deleting"
	reasonFound          = "Found"
	reasonOrphaned       = "Orphaned"
	reasonNotDeleted     = "NotDeleted"
	reasonInvalidSpec    = "InvalidSpec"
	reasonNameConflict   = "ExternalNameConflict"
	reasonForeign        = "ExternalResourceOfAnotherObject"
)

// Reconciler runs a [Client]: it is a reconciler.Reconciler and a
// reconciler.Finalizer for T, so kopgo's controller Builder runs it like
// any other (New[T]("name", external.New(connect)).Run(ctx)). Make one
// with [New]; its zero value is not usable.
type Reconciler[T client.Object] struct {
	connect     func(context.Context, T, *reconciler.Env) (Client[T], error)
	period      time.Duration
	callTimeout time.Duration
	perSecond   float64
	burst       int
	deletion    DeletionPolicy
	optErr      error
	now         func() time.Time
	memos       memos
	systems     systems
}

// New returns a Reconciler that keeps, for each object of type T, one
// resource in an external system, through the Client that connect returns
// for the object. connect is called before the calls of a reconcile that
// has work to do (none for an object whose next check is not due), and
// during deletion: read the credentials the object names there (a Secret
// through env.Client when the Builder has References for Secrets, which
// sends that read to the API server; through env.Reader otherwise)
// and return a client that uses them. An error from connect is the
// reconcile's (koperrors.WithReason(koperrors.Terminal(err),
// "SecretNotFound") for a Secret that does not exist).
func New[T client.Object](connect func(ctx context.Context, obj T, env *reconciler.Env) (Client[T], error), opts ...Option) *Reconciler[T] {
	o := options{period: defaultPeriod, callTimeout: defaultCallTimeout, deletion: Delete}
	for _, opt := range opts {
		opt(&o)
	}
	var optErr error
	if len(o.errs) > 0 {
		optErr = koperrors.WrapKind(koperrors.Config, errors.Join(o.errs...), "configure external Reconciler", kopmeta.ObjectRef{})
	}
	return &Reconciler[T]{connect: connect, period: o.period, callTimeout: o.callTimeout, perSecond: o.perSecond,
		burst: o.burst, deletion: o.deletion, optErr: optErr, now: time.Now}
}

// Reconcile makes obj's external resource exist and match obj's spec; see
// the package documentation for the steps and their crash safety.
func (r *Reconciler[T]) Reconcile(ctx context.Context, obj T, env *reconciler.Env) (reconciler.Action, error) {
	act, err := r.reconcile(ctx, obj, env)
	return r.holding(act, err)
}

func (r *Reconciler[T]) reconcile(ctx context.Context, obj T, env *reconciler.Env) (reconciler.Action, error) {
	if r.optErr != nil {
		return reconciler.Done(), r.optErr
	}
	now := r.now()
	ann := obj.GetAnnotations()
	id, pending := ann[NameAnnotation], ann[PendingAnnotation]
	after, skip := r.notDue(obj, id, pending, now)
	m := r.memos.get(obj.GetUID())
	if skip && m.creds == "" {
		return reconciler.RequeueAfter(after), nil
	}
	if err := r.heldFor(obj, now); err != nil {
		return reconciler.Done(), err
	}
	c, err := r.client(ctx, obj, env)
	if err != nil {
		return reconciler.Done(), err
	}
	if skip {
		if credentials(c) == m.creds {
			return reconciler.RequeueAfter(after), nil
		}
		log.FromContext(ctx).V(1).Info("Credentials changed; checking the external resource now")
	}
	if err := validate(ctx, c, obj); err != nil {
		return reconciler.Done(), err
	}
	asked := false
	if id == "" && pending != "" {
		if id, err = r.resolve(ctx, c, obj, pending, false); err != nil {
			return reconciler.Done(), err
		}
		if id != "" {
			if err := r.record(ctx, env, obj, id); err != nil {
				return reconciler.Done(), err
			}
		}
		asked = true
	}
	if id == "" {
		return r.create(ctx, env, c, obj, now, asked, "")
	}
	if m.id != "" && m.id != id {
		if err := r.recheck(ctx, c, obj, id, m.id); err != nil {
			return reconciler.Done(), err
		}
	}
	return r.check(ctx, env, c, obj, id, now)
}

// notDue reports whether obj needs no call now, and when to look again:
// its resource is recorded, the object is Ready for its current
// generation (status.IsCurrent), and its next check is not due. Seen for
// the first time by this process (after a restart), such an object was
// checked by the one before: its next check is its next slot, so that a
// restart costs the external system nothing.
func (r *Reconciler[T]) notDue(obj T, id, pending string, now time.Time) (time.Duration, bool) {
	g, ok := any(obj).(status.Getter)
	if id == "" || pending != "" || !ok || !status.IsTrue(g, status.Ready) || !status.IsCurrent(g) {
		return 0, false
	}
	uid := obj.GetUID()
	m := r.memos.get(uid)
	switch {
	case m.next.IsZero():
		next := nextSlot(now, uid, r.period)
		r.memos.update(uid, func(m *memo) { m.next, m.id = next, id })
		return next.Sub(now), true
	case m.id == id && now.Before(m.next.Add(-r.period/100)):
		return m.next.Sub(now), true
	}
	return 0, false
}

// client connects to the external system for obj.
func (r *Reconciler[T]) client(ctx context.Context, obj T, env *reconciler.Env) (Client[T], error) {
	if r.connect == nil {
		return nil, koperrors.Errorf(koperrors.Config, "external.New was given no connect function")
	}
	c, err := r.connect(ctx, obj, env)
	if err == nil && c == nil {
		err = koperrors.Errorf(koperrors.Config, "connect returned no Client and no error for %s", kopmeta.RefOf(obj))
	}
	return c, err
}

// credentials is the identity of c's credentials ([Credentialed]); "":
// unknown.
func credentials(c any) string {
	if cr, ok := c.(Credentialed); ok {
		return cr.Credentials()
	}
	return ""
}

// validate runs c's [Validator]: an error is a verdict on the spec.
func validate[T client.Object](ctx context.Context, c Client[T], obj T) error {
	v, ok := c.(Validator[T])
	if !ok {
		return nil
	}
	err := v.Validate(ctx, obj)
	if err == nil {
		return nil
	}
	if koperrors.ReasonOf(err) == koperrors.KindOf(err).String() {
		err = koperrors.WithReason(err, reasonInvalidSpec)
	}
	if !koperrors.IsTerminal(err) {
		err = koperrors.Terminal(err)
	}
	return koperrors.WrapKind(koperrors.Invalid, err, "validate the spec of", kopmeta.RefOf(obj))
}

// create creates obj's resource: with a Finder, it asks Find first (unless
// asked is set: it just did) and records a resource made for obj before
// (its ID lost: the annotation removed, or edited) rather than creating a
// second; gone is an ID just observed gone, not taken from Find. Then the
// pending mark, the call, the ID recorded, and one observation of what
// was made.
func (r *Reconciler[T]) create(ctx context.Context, env *reconciler.Env, c Client[T], obj T, now time.Time, asked bool, gone string) (reconciler.Action, error) {
	if f, ok := c.(Finder[T]); ok && !asked {
		found, err := r.find(ctx, f, obj)
		if err != nil {
			return reconciler.Done(), err
		}
		if found != "" && found != gone {
			if err := r.record(ctx, env, obj, found); err != nil {
				return reconciler.Done(), err
			}
			env.Recorder.Normal(obj, nil, reasonFound, "Find", fmt.Sprintf("Found external resource %s, created for this object; recorded it", found))
			return r.check(ctx, env, c, obj, found, now)
		}
	}
	if err := r.systems.get(systemName(c)).held(systemName(c), "create", now); err != nil {
		return reconciler.Done(), err // no pending mark for a create that cannot go yet
	}
	if err := markPending(ctx, env, obj, now); err != nil {
		return reconciler.Done(), err
	}
	var id string
	err := r.do(ctx, c, obj, "create", func(ctx context.Context) (err error) {
		id, err = c.Create(ctx, obj, key(obj))
		if err == nil && id == "" {
			err = koperrors.Errorf(koperrors.Internal, "Create returned no ID for %s", kopmeta.RefOf(obj))
		}
		return err
	})
	if err != nil {
		if madeNothing(c, err) && ctx.Err() == nil && id == "" {
			// Nothing was created: the mark goes, so that the retry needs
			// no Find (or person) to know it.
			err = errors.Join(err, clearPending(ctx, env, obj))
		}
		return reconciler.Done(), err
	}
	uid := obj.GetUID()
	r.memos.update(uid, func(m *memo) { m.created, m.createdAt = id, now })
	if err := r.record(ctx, env, obj, id); err != nil {
		return reconciler.Done(), err
	}
	env.Recorder.Normal(obj, nil, reasonCreated, "Create", fmt.Sprintf("Created external resource %s", id))
	return r.check(ctx, env, c, obj, id, now)
}

// madeNothing reports whether a Create that failed with err certainly
// created nothing. A call not made (a Retry-After still running) and a
// terminal error (the system refused the request: a 4xx) did not.
// Any other may have come after the write (a gateway's 502 or
// 503, a connection reset after the request was sent): with a Finder the
// pending mark stays and the next reconcile asks Find; without one, only a
// Timeout is taken as unknown, so that every 503 does not need a person.
func madeNothing[T client.Object](c Client[T], err error) bool {
	if _, ok := errors.AsType[*heldError](err); ok || koperrors.IsTerminal(err) {
		return true // not called, or refused
	}
	if _, ok := c.(Finder[T]); ok {
		return false
	}
	return koperrors.KindOf(err) != koperrors.Timeout
}

// record records id on obj, and forgets it once it is.
func (r *Reconciler[T]) record(ctx context.Context, env *reconciler.Env, obj T, id string) error {
	if err := record(ctx, env, obj, id); err != nil {
		return err
	}
	r.memos.update(obj.GetUID(), func(m *memo) { m.created = "" })
	return nil
}

// resolve finds the ID of the resource a create under way since since may
// have made: the one this process made and could not record, else the one
// the Client's Find finds; "" when none was made. Without a Finder the
// outcome is unknown: a terminal error that says what a person can do.
func (r *Reconciler[T]) resolve(ctx context.Context, c Client[T], obj T, since string, deleting bool) (string, error) {
	if id := r.memos.get(obj.GetUID()).created; id != "" {
		return id, nil
	}
	f, ok := c.(Finder[T])
	if !ok {
		return "", unknownOutcome(obj, since, deleting)
	}
	return r.find(ctx, f, obj)
}

// find calls Find with obj's key.
func (r *Reconciler[T]) find(ctx context.Context, f Finder[T], obj T) (string, error) {
	var id string
	err := r.do(ctx, f, obj, "find", func(ctx context.Context) (err error) {
		id, err = f.Find(ctx, obj, key(obj))
		return err
	})
	return id, err
}

// check observes obj's resource and acts on what it sees: created again
// when gone, updated when it differs; then the next check is scheduled.
func (r *Reconciler[T]) check(ctx context.Context, env *reconciler.Env, c Client[T], obj T, id string, now time.Time) (reconciler.Action, error) {
	obs, err := r.observe(ctx, env, c, obj, id)
	if err != nil {
		return reconciler.Done(), err
	}
	uid := obj.GetUID()
	switch {
	case !obs.Exists && now.Sub(r.memos.get(uid).createdAt) < min(visibilityGrace, r.period):
		return r.waiting(obj, fmt.Sprintf("external resource %s was created and is not visible yet", id))
	case !obs.Exists:
		env.Recorder.Normal(obj, nil, reasonDriftCorrected, "Create", fmt.Sprintf("External resource %s is gone; creating it again", id))
		return r.create(ctx, env, c, obj, now, false, id)
	case obs.Deleting:
		return r.waiting(obj, fmt.Sprintf("external resource %s is being deleted by the system; it is created again once gone", id))
	case !obs.UpToDate:
		drift := settled(obj)
		if err := r.do(ctx, c, obj, "update", func(ctx context.Context) error { return c.Update(ctx, obj, id) }); err != nil {
			return reconciler.Done(), err
		}
		if drift {
			env.Recorder.Normal(obj, nil, reasonDriftCorrected, "Update", fmt.Sprintf("External resource %s differed from the spec; updated it", id))
		} else {
			env.Recorder.Normal(obj, nil, reasonUpdated, "Update", fmt.Sprintf("Updated external resource %s", id))
		}
		if obs, err = r.observe(ctx, env, c, obj, id); err != nil {
			return reconciler.Done(), err
		}
		if !obs.Exists {
			return r.waiting(obj, fmt.Sprintf("external resource %s was updated and is not visible now", id))
		}
	}
	if obs.NotReady != "" {
		return r.waiting(obj, obs.NotReady)
	}
	next := nextSlot(now, uid, r.period)
	creds := credentials(c)
	r.memos.update(uid, func(m *memo) { m.next, m.id, m.creds = next, id, creds })
	return reconciler.RequeueAfter(next.Sub(now)), nil
}

// waiting reports obj Reconciling with msg and looks again soon.
func (r *Reconciler[T]) waiting(obj T, msg string) (reconciler.Action, error) {
	if s, ok := any(obj).(status.Setter); ok {
		status.MarkReconciling(s, reasonProvisioning, msg)
	}
	r.memos.update(obj.GetUID(), func(m *memo) { m.next = time.Time{} })
	return reconciler.RequeueAfter(soon(r.period)), nil
}

// observe calls Observe; a NotFound error is an observation that the
// resource is gone, however the client reported it. A resource made for
// another object (its Key) is refused: a terminal error naming both.
func (r *Reconciler[T]) observe(ctx context.Context, env *reconciler.Env, c Client[T], obj T, id string) (Observation, error) {
	var obs Observation
	err := r.do(ctx, c, obj, "observe", func(ctx context.Context) (err error) {
		obs, err = c.Observe(ctx, obj, id)
		return err
	})
	if koperrors.KindOf(err) == koperrors.NotFound {
		return Observation{}, nil
	}
	if err == nil && obs.Exists && obs.Key != "" && obs.Key != key(obj) {
		return obs, foreign(ctx, env, obj, id, obs.Key)
	}
	return obs, err
}

// settled reports whether obj is Ready for its current generation.
func settled(obj client.Object) bool {
	g, ok := obj.(status.Getter)
	return ok && status.IsTrue(g, status.Ready) && status.IsCurrent(g)
}
