package fakesystem_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/external"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/testkit"
	"github.com/kopgo/kopgo/test/testkit/fakesystem"
	"github.com/kopgo/kopgo/test/widget"
)

// newWidget creates Widget name of size in ns, labelled for the operator.
func newWidget(t *testing.T, c *testkit.Cluster, ns, name string, size int64) *widget.Widget {
	t.Helper()
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"fakesystem": ns}},
		Spec: widget.WidgetSpec{Size: size}}
	if err := c.Client().Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	return w
}

// ready returns w's recorded ID once w is Ready for its generation.
func ready(t *testing.T, c *testkit.Cluster, w *widget.Widget) (string, error) {
	t.Helper()
	got := &widget.Widget{}
	if err := c.Client().Get(t.Context(), client.ObjectKeyFromObject(w), got); err != nil {
		return "", err
	}
	id := got.Annotations[external.NameAnnotation]
	if id == "" || !status.IsTrue(got, status.Ready) || !status.IsCurrent(got) {
		return "", fmt.Errorf("%s: id %q, conditions %v", got.Name, id, got.Status.Conditions)
	}
	return id, nil
}

// checkOnePerWidget fails the test unless the system holds exactly one
// resource per Widget (by tag: its UID), the one recorded on it.
func checkOnePerWidget(t *testing.T, sys *fakesystem.System, ws []*widget.Widget, ids []string) {
	t.Helper()
	for i, w := range ws {
		held := sys.Find(string(w.UID))
		if len(held) != 1 || held[0].ID != ids[i] {
			t.Errorf("%s records %q; the system holds %d resources with its tag: %v", w.Name, ids[i], len(held), held)
		}
	}
	if n := len(sys.Resources()); n != len(ws) {
		t.Errorf("%d resources for %d Widgets", n, len(ws))
	}
}

// deleteAll deletes the Widgets and waits until they and their resources
// are gone.
func deleteAll(t *testing.T, c *testkit.Cluster, sys *fakesystem.System, ns string, ws []*widget.Widget) {
	t.Helper()
	for _, w := range ws {
		if err := c.Client().Delete(t.Context(), w); err != nil {
			t.Fatal(err)
		}
	}
	eventuallyWithin(t, 60*time.Second, "every Widget gone, and its resource", func() error {
		list := &widget.WidgetList{}
		if err := c.Client().List(t.Context(), list, client.InNamespace(ns)); err != nil {
			return err
		}
		if left := len(sys.Resources()); len(list.Items)+left > 0 {
			return fmt.Errorf("%d Widgets, %d resources left", len(list.Items), left)
		}
		return nil
	})
}

// A tiny operator on kopgo's external package, run in the test's process,
// against the API server and a system that loses the answers to the first
// 3 creates (502 after the write), answers 10% of all calls 503 with
// Retry-After 1 s, slows 10% by 50 ms and deletes asynchronously: each
// Widget ends with exactly one resource (its Find resolves the lost
// answers), a spec change reaches it, and deletion leaves nothing behind.
func TestOperatorUnderFaults(t *testing.T) {
	c := testCluster(t)
	ns := c.Namespace(t)
	sys := fakesystem.Start(t, fakesystem.Options{Tokens: []string{token}, Seed: 35, Async: fakesystem.Async{Delete: 300 * time.Millisecond}})
	err := sys.Inject(
		fakesystem.Fault{Method: http.MethodPost, Times: 3, LoseAnswer: true},
		fakesystem.Fault{Rate: 0.1, Status: http.StatusServiceUnavailable, RetryAfter: time.Second},
		fakesystem.Fault{Rate: 0.1, Latency: 50 * time.Millisecond},
	)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- widgetOperator("faults-"+ns, sys.URL(), ns).Config(c.Config).Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})

	ws := make([]*widget.Widget, 10)
	for i := range ws {
		ws[i] = newWidget(t, c, ns, fmt.Sprintf("w%02d", i), 1)
	}
	ids := make([]string, len(ws))
	eventuallyWithin(t, 90*time.Second, "every Widget Ready", func() error {
		for i, w := range ws {
			id, err := ready(t, c, w)
			if err != nil {
				return err
			}
			ids[i] = id
		}
		return nil
	})
	checkOnePerWidget(t, sys, ws, ids)
	if st := sys.Stats(); st.Created != len(ws) {
		t.Errorf("%d creates stored for %d Widgets", st.Created, len(ws))
	}

	got := &widget.Widget{}
	if err := c.Client().Get(t.Context(), client.ObjectKeyFromObject(ws[0]), got); err != nil {
		t.Fatal(err)
	}
	got.Spec.Size = 7
	if err := c.Client().Update(t.Context(), got); err != nil {
		t.Fatal(err)
	}
	eventually(t, "size 7 at the system", func() error {
		r, err := sys.Get(ids[0])
		if err != nil {
			return err
		}
		if string(r.Fields["size"]) != "7" {
			return fmt.Errorf("size %s", r.Fields["size"])
		}
		return nil
	})

	deleteAll(t, c, sys, ns, ws)
	st := sys.Stats()
	injected := 0
	for _, r := range sys.Requests() {
		if r.Injected {
			injected++
		}
	}
	t.Logf("%d requests (%v), %d met a fault, peak %d/s; %d created, %d deleted", st.Requests, st.ByMethod, injected, st.PeakPerSecond, st.Created, st.Deleted)
}

// The same operator as a process of its own, SIGKILLed after the system
// stored each Widget's create and before its answer, and started again:
// the new process finds the resource by its tag instead of creating a
// second one.
func TestOperatorKilledAtEachCreate(t *testing.T) {
	c := testCluster(t)
	ns := c.Namespace(t)
	sys := fakesystem.Start(t, fakesystem.Options{Tokens: []string{token}})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=operator", "KUBECONFIG="+c.Kubeconfig, urlEnv+"="+sys.URL(), namespaceEnv+"="+ns)
	op := fakesystem.StartOperator(t, cmd)

	ws := make([]*widget.Widget, 5)
	ids := make([]string, len(ws))
	for i := range ws {
		killed := op.KillAt(sys, func(w fakesystem.Write) bool { return w.Method == http.MethodPost })
		ws[i] = newWidget(t, c, ns, fmt.Sprintf("w%02d", i), int64(i))
		select {
		case <-killed:
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: the operator was not killed at its create within 60 s", ws[i].Name)
		}
		eventuallyWithin(t, 60*time.Second, ws[i].Name+" Ready after the kill", func() error {
			id, err := ready(t, c, ws[i])
			ids[i] = id
			return err
		})
	}
	if s, k := op.Starts(), op.Kills(); s != len(ws)+1 || k != len(ws) {
		t.Errorf("operator started %d times, killed %d; want %d and %d", s, k, len(ws)+1, len(ws))
	}
	checkOnePerWidget(t, sys, ws, ids)
	deleteAll(t, c, sys, ns, ws)
	t.Logf("%d kills; %d creates stored for %d Widgets; %d requests", op.Kills(), sys.Stats().Created, len(ws), sys.Stats().Requests)
}
