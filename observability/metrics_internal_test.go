package observability

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	koperrors "github.com/kopgo/kopgo/errors"
)

// Every error_kind value is lower snake_case of a Kind's name.
func TestErrorKindLabels(t *testing.T) {
	var got []string
	for _, k := range koperrors.Kinds() {
		got = append(got, errorKindLabel(k))
	}
	want := []string{"internal", "not_found", "conflict", "forbidden", "invalid", "timeout", "unavailable",
		"serialization", "io", "config", "already_exists", "expired"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("error_kind values (-want +got):\n%s", diff)
	}
}
