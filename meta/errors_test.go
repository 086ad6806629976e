package meta_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kopmeta "github.com/kopgo/kopgo/meta"
)

// TestValidationErrorIsInvalid checks that code written for the API
// server's errors (apierrors.IsInvalid, the causes of a 422) handles a
// ValidationError the same way, also when it is wrapped.
func TestValidationErrorIsInvalid(t *testing.T) {
	_, err := kopmeta.New("Web").Labels(map[string]string{"k": "-v"}).Finalizer("cleanup").Build()
	if err == nil {
		t.Fatal("Build() succeeded, want an error")
	}
	type status struct {
		Code    int32
		Reason  metav1.StatusReason
		Message string
		Causes  []metav1.StatusCause
	}
	want := status{
		Code:    http.StatusUnprocessableEntity,
		Reason:  metav1.StatusReasonInvalid,
		Message: err.Error(),
		Causes: []metav1.StatusCause{
			{Type: metav1.CauseTypeFieldValueInvalid, Field: "metadata.name"},
			{Type: metav1.CauseTypeFieldValueInvalid, Field: `metadata.labels["k"]`},
			{Type: metav1.CauseTypeFieldValueInvalid, Field: "metadata.finalizers[0]"},
		},
	}
	tests := []struct {
		name string
		err  error
	}{
		{"as returned", err},
		{"wrapped", fmt.Errorf("build ConfigMap shop/web: %w", err)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !apierrors.IsInvalid(tt.err) {
				t.Errorf("apierrors.IsInvalid(%v) = false, want true", tt.err)
			}
			var as apierrors.APIStatus
			if !errors.As(tt.err, &as) {
				t.Fatalf("%v is not an apierrors.APIStatus", tt.err)
			}
			s := as.Status()
			got := status{Code: s.Code, Reason: s.Reason, Message: s.Message}
			for _, c := range s.Details.Causes {
				if c.Message == "" {
					t.Errorf("cause %s has no message", c.Field)
				}
				c.Message = "" // the validators' wording, pinned elsewhere
				got.Causes = append(got.Causes, c)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Status() (-want +got):\n%s", diff)
			}
		})
	}
}
