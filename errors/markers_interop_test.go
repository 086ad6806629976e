package errors_test

import (
	stderrors "errors"
	"fmt"
	"io"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	koperrors "github.com/kopgo/kopgo/errors"
)

// kopgo's Terminal and controller-runtime's TerminalError are one marker:
// each is recognised where the other is tested for.
func TestTerminalInteroperatesWithControllerRuntime(t *testing.T) {
	cause := io.ErrUnexpectedEOF
	for _, tc := range []struct {
		name           string
		err            error
		kopgo, runtime bool // IsTerminal; stderrors.Is(err, reconcile.TerminalError(nil))
	}{
		{"kopgo Terminal", koperrors.Terminal(cause), true, true},
		{"wrapped kopgo Terminal", fmt.Errorf("sync: %w", koperrors.Terminal(cause)), true, true},
		{"controller-runtime TerminalError", reconcile.TerminalError(cause), true, true},
		{"wrapped controller-runtime TerminalError", fmt.Errorf("sync: %w", reconcile.TerminalError(cause)), true, true},
		{"joined", stderrors.Join(cause, koperrors.Terminal(io.EOF)), true, true},
		{"plain", cause, false, false},
		{"nil", nil, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := koperrors.IsTerminal(tc.err); got != tc.kopgo {
				t.Errorf("IsTerminal = %v, want %v", got, tc.kopgo)
			}
			if got := stderrors.Is(tc.err, reconcile.TerminalError(nil)); got != tc.runtime {
				t.Errorf("stderrors.Is(err, reconcile.TerminalError(nil)) = %v, want %v", got, tc.runtime)
			}
		})
	}
	// The marker adds nothing else: the cause is still found, another error
	// is not.
	err := koperrors.Terminal(cause)
	if !stderrors.Is(err, cause) || stderrors.Is(err, io.EOF) {
		t.Errorf("stderrors.Is through Terminal: cause %v, other %v", stderrors.Is(err, cause), stderrors.Is(err, io.EOF))
	}
}
