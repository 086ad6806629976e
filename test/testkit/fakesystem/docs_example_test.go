package fakesystem_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/kopgo/kopgo/test/testkit/fakesystem"
	"github.com/kopgo/kopgo/test/widget"
)

// The example test of docs/external.md ("With the test kit's fake
// system"), quoted there verbatim (docs/doccheck holds the two together):
// an operator on external against the API server and a fake system that
// loses the answers to its first 3 creates and refuses 1 call in 10 with
// a 503: one resource per Widget, none left after their deletion.
func TestLostAnswersMakeNoDuplicates(t *testing.T) {
	c := testCluster(t)
	ns := c.Namespace(t)
	sys := fakesystem.Start(t, fakesystem.Options{Tokens: []string{token}, Seed: 1})
	err := sys.Inject(
		fakesystem.Fault{Method: http.MethodPost, Times: 3, LoseAnswer: true}, // stored, then a 502
		fakesystem.Fault{Rate: 0.1, Status: http.StatusServiceUnavailable},
	)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- widgetOperator("docs-"+ns, sys.URL(), ns).Config(c.Config).Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})

	var ws []*widget.Widget // the operator's custom resources
	for _, name := range []string{"a", "b", "c"} {
		ws = append(ws, newWidget(t, c, ns, name, 1))
	}
	for _, w := range ws {
		eventually(t, "Ready", func() error { _, err := ready(t, c, w); return err })
		if held := sys.Find(string(w.UID)); len(held) != 1 { // by the tag Create sent: the UID
			t.Errorf("%s: %d resources: %v", w.Name, len(held), held)
		}
	}
	deleteAll(t, c, sys, ns, ws) // waits until the system holds none
	t.Logf("%+v", sys.Stats())   // requests by method, peak per second, created, deleted
}
