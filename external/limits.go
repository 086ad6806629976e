package external

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/internal/calls"
	"github.com/kopgo/kopgo/internal/sleep"
	"github.com/kopgo/kopgo/internal/telemetry"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// systemState is what a Reconciler knows of the limits of one external
// system: the end of a Retry-After it asked for, and its rate limit's
// token bucket.
type systemState struct {
	mu sync.Mutex
	// until is the end of the system's last Retry-After (a 429 or a 503
	// to any object); why is the call that got it.
	until time.Time
	why   string
	// tokens is the rate limit's bucket at last (negative: calls are
	// waiting for their turn).
	tokens float64
	last   time.Time
	// starts are the start times of the calls of the last second, under
	// a rate limit: a hard cap of perSecond+burst in any second, against
	// the timers' own lateness bunching the bucket's calls.
	starts []time.Time
}

// systems holds the state of each external system by name.
type systems struct {
	mu sync.Mutex
	m  map[string]*systemState
}

func (s *systems) get(name string) *systemState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]*systemState{}
	}
	st, ok := s.m[name]
	if !ok {
		st = &systemState{}
		s.m[name] = st
	}
	return st
}

// systemName is the name of the system c talks to (see [SystemNamer]).
func systemName(c any) string {
	if n, ok := c.(SystemNamer); ok {
		return n.System()
	}
	return ""
}

// heldError is a call not made: the system (or the object's last answer)
// asked to wait until until, or an earlier call of the object past its
// deadline has not returned.
type heldError struct {
	until time.Time
	msg   string
}

func (h *heldError) Error() string { return h.msg }

// held returns the error of a call to the system not made before until
// (a Retry-After still running), or nil.
func (st *systemState) held(name, op string, now time.Time) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !now.Before(st.until) {
		return nil
	}
	return koperrors.WrapKind(koperrors.Unavailable, &heldError{until: st.until, msg: fmt.Sprintf(
		"external system %s asked to wait until %s (Retry-After of %s): %s not called before then",
		quoted(name), st.until.UTC().Format(time.RFC3339), st.why, op)}, "", kopmeta.ObjectRef{})
}

// hold records a Retry-After of d from the system, answered to why.
func (st *systemState) hold(until time.Time, why string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if until.After(st.until) {
		st.until, st.why = until, why
	}
}

// reserve takes a token from the system's bucket (perSecond, burst) and
// returns how long to wait before the call may go. Tokens are taken in
// turn, so the waits queue up fairly; a wait cut short by the context
// does not give the token back (the system sees at most the limit).
func (st *systemState) reserve(now time.Time, perSecond float64, burst int) time.Duration {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.last.IsZero() {
		st.tokens, st.last = float64(burst), now
	}
	if now.After(st.last) {
		st.tokens = min(float64(burst), st.tokens+now.Sub(st.last).Seconds()*perSecond)
		st.last = now
	}
	st.tokens--
	if st.tokens >= 0 {
		return 0
	}
	return time.Duration(-st.tokens / perSecond * float64(time.Second))
}

// admit records a call's start at now if fewer than limit calls started
// in the second before; else it returns how long until one more may.
func (st *systemState) admit(now time.Time, limit int) time.Duration {
	st.mu.Lock()
	defer st.mu.Unlock()
	i := 0
	for i < len(st.starts) && now.Sub(st.starts[i]) >= time.Second {
		i++
	}
	st.starts = st.starts[i:]
	if len(st.starts) < limit {
		st.starts = append(st.starts, now)
		return 0
	}
	return st.starts[0].Add(time.Second).Sub(now)
}

// wait waits for the call's turn under the rate limit: its token, then
// room in the last second.
func (st *systemState) wait(ctx context.Context, now func() time.Time, perSecond float64, burst int) error {
	limit := int(math.Ceil(perSecond)) + burst
	if err := sleep.For(ctx, st.reserve(now(), perSecond, burst)); err != nil {
		return err
	}
	for {
		d := st.admit(now(), limit)
		if d <= 0 {
			return nil
		}
		if err := sleep.For(ctx, d); err != nil {
			return err
		}
	}
}

func quoted(name string) string {
	if name == "" {
		return "(unnamed)"
	}
	return fmt.Sprintf("%q", name)
}

// do runs one call to the external system for obj as operation op:
// not before the system's Retry-After, within its rate limit, under a
// deadline, in a span of its own, and recorded in the controller's
// metrics. A call past its deadline returns a Timeout whose outcome is
// unknown; a Client that ignores its context is left running, and no
// other call is made for obj until it returns.
func (r *Reconciler[T]) do(ctx context.Context, c any, obj T, op string, f func(context.Context) error) error {
	name := systemName(c)
	st := r.systems.get(name)
	uid := obj.GetUID()
	if m := r.memos.get(uid); m.running != "" {
		return koperrors.WrapKind(koperrors.Timeout, &heldError{until: r.now().Add(soon(r.period)), msg: fmt.Sprintf(
			"the %s past its deadline has not returned yet: no call before it does", m.running)},
			"external "+op+" of", kopmeta.RefOf(obj))
	}
	if r.perSecond > 0 {
		if err := st.wait(ctx, r.now, r.perSecond, r.burst); err != nil {
			return koperrors.Wrap(err, "wait for the rate limit of external system "+quoted(name)+" before "+op+" of", kopmeta.RefOf(obj))
		}
	}
	if err := st.held(name, op, r.now()); err != nil {
		return err
	}
	sctx, span := telemetry.StartSpan(ctx, "external "+op)
	start := time.Now()
	err := r.call(sctx, obj, op, f)
	calls.Record(ctx, op, err, time.Since(start))
	telemetry.EndSpan(span, "", err)
	if d, ok := koperrors.RetryAfterOf(err); ok {
		until := r.now().Add(d)
		if koperrors.KindOf(err) == koperrors.Unavailable {
			st.hold(until, article(op)+" "+op+" of "+kopmeta.RefOf(obj).String())
		}
		r.memos.update(uid, func(m *memo) { m.holdUntil = until })
	}
	return err
}

// call runs f under the call deadline. f runs in a goroutine of its own,
// so that a Client ignoring its context cannot hold the worker.
func (r *Reconciler[T]) call(ctx context.Context, obj T, op string, f func(context.Context) error) error {
	cctx, cancel := context.WithTimeout(ctx, r.callTimeout)
	defer cancel()
	done := make(chan error, 1)
	uid := obj.GetUID()
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- koperrors.Errorf(koperrors.Internal, "external %s of %s panicked: %v", op, kopmeta.RefOf(obj), p)
			}
		}()
		done <- f(cctx)
	}()
	select {
	case err := <-done:
		if err != nil && errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			return r.timedOut(obj, op, err)
		}
		return err
	case <-cctx.Done():
	}
	if ctx.Err() != nil {
		return koperrors.Wrap(ctx.Err(), "external "+op+" of", kopmeta.RefOf(obj))
	}
	// Abandoned: the object gets no other call until this one returns.
	r.memos.update(uid, func(m *memo) { m.running = op })
	go func() {
		if err := <-done; err != nil {
			log.FromContext(ctx).V(1).Info("Abandoned external call returned", "operation", op, "error", err.Error())
		}
		r.memos.done(uid)
	}()
	return r.timedOut(obj, op, context.DeadlineExceeded)
}

// timedOut is the error of a call past its deadline.
func (r *Reconciler[T]) timedOut(obj client.Object, op string, cause error) error {
	outcome := ""
	if op != "observe" && op != "find" {
		outcome = ", its outcome unknown"
	}
	return koperrors.WrapKind(koperrors.Timeout, fmt.Errorf("no answer within %s%s: %w", r.callTimeout, outcome, cause),
		"external "+op+" of", kopmeta.RefOf(obj))
}

// article is the indefinite article of word ("an observe", "a create").
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}
