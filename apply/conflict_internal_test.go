package apply

import (
	stderrors "errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The conflict a TakeoverError carries does not make a refusal that time
// resolves (an object that appeared during the apply) terminal.
func TestConflictInTakeoverDoesNotDecide(t *testing.T) {
	conflict := &ConflictError{Conflicts: []FieldConflict{{Manager: "m", Field: ".data.k"}}, inTakeover: true}
	terr := &TakeoverError{Owner: metav1.OwnerReference{Kind: "ConfigMap", Name: "p"}, Appeared: true, Manager: "m", conflict: conflict}
	if stderrors.Is(terr, reconcile.TerminalError(nil)) {
		t.Errorf("an appeared object with a conflict is terminal")
	}
	if !stderrors.Is(&ConflictError{}, reconcile.TerminalError(nil)) {
		t.Errorf("a conflict alone is not terminal")
	}
}
