package controller_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kopcontroller "github.com/kopgo/kopgo/controller"
	"github.com/kopgo/kopgo/observability"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/test/widget"
)

// killedOperatorEnv, set, makes the test binary run killedOperatorMain
// instead of its tests: an operator process that a test can SIGKILL.
const killedOperatorEnv = "KOPGO_TEST_KILLED_OPERATOR"

// killedOperatorMain runs an operator of Widgets whose Reconcile creates
// an entry in an external store (an HTTP API) and whose Cleanup deletes
// it, until SIGTERM (or SIGKILL). Its settings come from the environment.
func killedOperatorMain() int {
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KOPGO_TEST_KUBECONFIG"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ns, store := os.Getenv("KOPGO_TEST_NAMESPACE"), os.Getenv("KOPGO_TEST_STORE")
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	err = kopcontroller.New[*widget.Widget]("killed-operator", storeReconciler{url: store}).Concurrency(32).
		Config(cfg).Scheme(scheme).Recorder(&observability.FakeRecorder{}).LabelSelector("loop=" + ns).Run(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// storeReconciler keeps an entry per Widget in the external store.
type storeReconciler struct{ url string }

func (s storeReconciler) Reconcile(ctx context.Context, w *widget.Widget, _ *reconciler.Env) (reconciler.Action, error) {
	return reconciler.Done(), s.call(ctx, http.MethodPut, string(w.UID))
}

func (s storeReconciler) Cleanup(ctx context.Context, w *widget.Widget, _ *reconciler.Env) (reconciler.Action, error) {
	return reconciler.Done(), s.call(ctx, http.MethodDelete, string(w.UID))
}

func (s storeReconciler) call(ctx context.Context, method, id string) error {
	req, err := http.NewRequestWithContext(ctx, method, s.url+"/entries/"+id, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode >= 300 {
		return fmt.Errorf("store: %s %s: %s", method, id, resp.Status)
	}
	return nil
}

// entryStore is the external system: entries by ID. Until it holds want
// entries, a create is held unanswered, so that every Reconcile is inside
// its call when the store's onFull runs.
type entryStore struct {
	mu      sync.Mutex
	entries map[string]bool
	want    int
	full    chan struct{}
	onFull  func()
	creates int
}

func (s *entryStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/entries/")
	s.mu.Lock()
	switch r.Method {
	case http.MethodPut:
		if !s.entries[id] {
			s.creates++
		}
		s.entries[id] = true
		if len(s.entries) == s.want && s.onFull != nil {
			s.onFull()
			s.onFull = nil
			close(s.full)
		}
		s.mu.Unlock()
		select {
		case <-s.full:
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	case http.MethodDelete:
		delete(s.entries, id)
		s.mu.Unlock()
	default:
		s.mu.Unlock()
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func (s *entryStore) size() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

// startKilledOperator starts the operator process; it is killed when the
// test ends, if it still runs.
func startKilledOperator(t *testing.T, ns, store, logName string) *exec.Cmd {
	t.Helper()
	out, err := os.Create(filepath.Join(t.TempDir(), logName))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), killedOperatorEnv+"=1", "KOPGO_TEST_KUBECONFIG="+cluster.Kubeconfig,
		"KOPGO_TEST_NAMESPACE="+ns, "KOPGO_TEST_STORE="+store)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done); _ = out.Close() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			data, _ := os.ReadFile(out.Name())
			t.Logf("%s:\n%s", logName, tail(string(data), 40))
		}
	})
	return cmd
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// The operator process is SIGKILLed while every one of its Reconciles has
// made its external entry, the objects are deleted while it is down, and
// it is started again: every entry is cleaned up (20 of 20), because the
// finalizer was on each object before its Reconcile ran. With the
// finalizer added after Reconcile returned, no object had it, all were
// deleted at once, and every entry leaked.
func TestSIGKILLedOperatorCleansUpAfterRestart(t *testing.T) {
	ns := cluster.Namespace(t)
	const n = 20
	store := &entryStore{entries: map[string]bool{}, want: n, full: make(chan struct{})}
	srv := httptest.NewServer(store)
	t.Cleanup(srv.Close)
	first := startKilledOperator(t, ns, srv.URL, "first.log")
	killed := make(chan struct{})
	store.onFull = func() { _ = first.Process.Kill(); close(killed) }
	ws := make([]*widget.Widget, n)
	for i := range n {
		ws[i] = createWidget(t, ns, fmt.Sprintf("w%d", i), ns)
	}
	select {
	case <-killed:
	case <-time.After(60 * time.Second):
		t.Fatalf("the store holds %d entries, want %d before the kill", store.size(), n)
	}
	for _, w := range ws {
		if err := cluster.Client().Delete(t.Context(), w); err != nil {
			t.Fatal(err)
		}
	}
	held := 0
	for _, w := range ws {
		err := cluster.Client().Get(t.Context(), client.ObjectKeyFromObject(w), &widget.Widget{})
		if err == nil {
			held++
		} else if !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	if held != n {
		t.Errorf("%d of %d objects held by the finalizer while the operator is down, want all", held, n)
	}
	startKilledOperator(t, ns, srv.URL, "second.log")
	eventually(t, 60*time.Second, "every entry cleaned up and every object gone", func() error {
		var list widget.WidgetList
		if err := cluster.Client().List(t.Context(), &list, client.InNamespace(ns)); err != nil {
			return err
		}
		if left := store.size(); left > 0 || len(list.Items) > 0 {
			return fmt.Errorf("%d entries left in the store, %d objects", left, len(list.Items))
		}
		return nil
	})
	store.mu.Lock()
	defer store.mu.Unlock()
	if store.creates != n {
		t.Errorf("%d entries created for %d objects, want %d", store.creates, n, n)
	}
}
