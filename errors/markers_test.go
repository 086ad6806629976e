package errors_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// outcome is what a reconcile loop reads from an error.
type outcome struct {
	Terminal     bool
	RequeueAfter time.Duration
	HasRequeue   bool
	RequeueOnly  bool
	Kind         string
	Message      string
}

func outcomeOf(err error) outcome {
	d, ok := koperrors.RequeueAfterOf(err)
	o := outcome{
		Terminal:     koperrors.IsTerminal(err),
		RequeueAfter: d,
		HasRequeue:   ok,
		RequeueOnly:  err != nil && !koperrors.Failed(err),
		Kind:         koperrors.KindOf(err).String(),
	}
	if err != nil {
		o.Message = err.Error()
	}
	return o
}

func TestMarkers(t *testing.T) {
	cause := apierrors.NewNotFound(gr, "web")
	msg := cause.Error()
	plain := fmt.Errorf("plain")
	tests := []struct {
		name string
		err  error
		want outcome
	}{
		{"nil", nil, outcome{Kind: "Internal"}},
		{"unmarked", cause, outcome{Kind: "NotFound", Message: msg}},
		{"terminal", koperrors.Terminal(cause),
			outcome{Terminal: true, Kind: "NotFound", Message: msg}},
		{"terminal nil", koperrors.Terminal(nil), outcome{Kind: "Internal"}},
		{"wrapped terminal", fmt.Errorf("reconcile: %w", koperrors.Terminal(cause)),
			outcome{Terminal: true, Kind: "NotFound", Message: "reconcile: " + msg}},
		{"joined terminal", errors.Join(plain, koperrors.Terminal(cause)),
			outcome{Terminal: true, Kind: "NotFound", Message: "plain\n" + msg}},
		{"requeue with cause", koperrors.RequeueAfter(cause, time.Minute),
			outcome{RequeueAfter: time.Minute, HasRequeue: true, Kind: "NotFound", Message: msg}},
		{"requeue only", koperrors.RequeueAfter(nil, 30*time.Second),
			outcome{RequeueAfter: 30 * time.Second, HasRequeue: true, RequeueOnly: true, Kind: "Internal", Message: "requeue after 30s"}},
		{"wrapped requeue only", fmt.Errorf("sync: %w", koperrors.RequeueAfter(nil, time.Second)),
			outcome{RequeueAfter: time.Second, HasRequeue: true, RequeueOnly: true, Kind: "Internal", Message: "sync: requeue after 1s"}},
		{"requeue now", koperrors.RequeueAfter(nil, -time.Second),
			outcome{HasRequeue: true, RequeueOnly: true, Kind: "Internal", Message: "requeue after 0s"}},
		{"requeue with cause and no delay", koperrors.RequeueAfter(cause, 0),
			outcome{Kind: "NotFound", Message: msg}},
		{"requeue joined with an error is not requeue only", errors.Join(koperrors.RequeueAfter(nil, time.Second), plain),
			outcome{RequeueAfter: time.Second, HasRequeue: true, Kind: "Internal", Message: "requeue after 1s\nplain"}},
		{"joined requeues take the shortest", errors.Join(koperrors.RequeueAfter(nil, time.Minute), koperrors.RequeueAfter(nil, time.Second)),
			outcome{RequeueAfter: time.Second, HasRequeue: true, RequeueOnly: true, Kind: "Internal", Message: "requeue after 1m0s\nrequeue after 1s"}},
		{"terminal requeue is not requeue only", koperrors.Terminal(koperrors.RequeueAfter(nil, time.Second)),
			outcome{Terminal: true, RequeueAfter: time.Second, HasRequeue: true, Kind: "Internal", Message: "requeue after 1s"}},
		{"terminal of a wrapped error", koperrors.Terminal(koperrors.Wrap(cause, "get", kopmeta.ObjectRef{Name: "web"})),
			outcome{Terminal: true, Kind: "NotFound", Message: "get web: " + msg}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, outcomeOf(tt.err)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Markers keep the cause reachable for Is, As and the cause's own helpers.
func TestMarkersKeepCause(t *testing.T) {
	cause := apierrors.NewConflict(gr, "web", fmt.Errorf("modified"))
	kerr := koperrors.Wrap(cause, "update", kopmeta.ObjectRef{Name: "web"})
	tests := []struct {
		name string
		err  error
	}{
		{"terminal", koperrors.Terminal(kerr)},
		{"requeue", koperrors.RequeueAfter(kerr, time.Second)},
		{"both, wrapped", fmt.Errorf("outer: %w", koperrors.Terminal(koperrors.RequeueAfter(kerr, time.Second)))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !errors.Is(tt.err, cause) {
				t.Error("Is(err, cause) = false")
			}
			var se *apierrors.StatusError
			if !errors.As(tt.err, &se) || se != cause {
				t.Errorf("As(*StatusError) = %v, want the cause", se)
			}
			if e, ok := errors.AsType[*koperrors.Error](tt.err); !ok || e != kerr { //nolint:errorlint // identity of the wrapped *Error is what is tested
				t.Errorf("AsType[*Error] = %v, %t, want the wrapped error", e, ok)
			}
			if !apierrors.IsConflict(tt.err) || koperrors.KindOf(tt.err) != koperrors.Conflict {
				t.Error("the conflict is not seen through the marker")
			}
		})
	}
}
