package errors_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// outcome is what a reconcile loop reads from an error.
type outcome struct {
	Terminal bool
	Kind     string
	Message  string
}

func outcomeOf(err error) outcome {
	o := outcome{
		Terminal: koperrors.IsTerminal(err),
		Kind:     koperrors.KindOf(err).String(),
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

// The API server's answers are verdicts about the spec only when they are
// about the request's content: a 422 naming a field, or a 400.
func TestIsTerminalServerVerdicts(t *testing.T) {
	gk := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	fieldCause := field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), -1, "must be at least 0")}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"422 naming a field", apierrors.NewInvalid(gk, "web", fieldCause), true},
		{"422 naming a field, wrapped", koperrors.Wrap(apierrors.NewInvalid(gk, "web", fieldCause), "apply", kopmeta.ObjectRef{Name: "web"}), true},
		{"422 without causes", apierrors.NewInvalid(gk, "web", nil), false},
		{"422 whose causes name no field", &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: 422, Reason: metav1.StatusReasonInvalid,
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: metav1.CauseTypeInternal, Message: "webhook down"}}},
		}}, false},
		{"400", apierrors.NewBadRequest("invalid character"), true},
		{"409 conflict", apierrors.NewConflict(gr, "web", fmt.Errorf("modified")), false},
		{"500", apierrors.NewInternalError(fmt.Errorf("etcd")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := koperrors.IsTerminal(tc.err); got != tc.want {
				t.Errorf("IsTerminal(%v) = %v, want %v", tc.err, got, tc.want)
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
		{"terminal, wrapped", fmt.Errorf("outer: %w", koperrors.Terminal(kerr))},
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
