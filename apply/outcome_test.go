package apply_test

import (
	"testing"

	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"

	"github.com/kopgo/kopgo/apply"
	koperrors "github.com/kopgo/kopgo/errors"
)

// A failed apply claims no outcome: its Outcome is the zero one, which is
// none of Created, Updated and Unchanged and prints as "None", so that a
// result read without its error cannot pass for "nothing changed".
func TestFailedApplyClaimsNoOutcome(t *testing.T) {
	ns := cluster.Namespace(t)
	a, _ := newApplier(t)
	// The API server refuses a Deployment without a selector (422).
	res, err := a.Apply(t.Context(), appsv1ac.Deployment("no-selector", ns).WithSpec(appsv1ac.DeploymentSpec().WithReplicas(1)))
	if koperrors.KindOf(err) != koperrors.Invalid || res.Requests != 1 {
		t.Fatalf("apply = %v with %d requests, want the API server's Invalid after 1", err, res.Requests)
	}
	for _, o := range []apply.Outcome{apply.Created, apply.Updated, apply.Unchanged} {
		if res.Outcome == o {
			t.Errorf("failed apply's Outcome = %s", o)
		}
	}
	if got := res.Outcome.String(); got != "None" {
		t.Errorf("failed apply's Outcome prints as %q, want None", got)
	}
	if (apply.Result{}).Outcome == apply.Unchanged {
		t.Error("the zero Result reads as Unchanged")
	}
}
