package reliability_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/examples/webapp"
	"github.com/kopgo/kopgo/test/testkit"
)

// runLabel marks a scenario's WebApps; the scenario's operators select them
// with --selector, so that no operator sees another scenario's objects.
const runLabel = "reliability.kopgo.dev/run"

// leaseName is the operator's leader-election Lease ("<name>-operator").
const leaseName = "webapp-operator"

// scenario is one test's namespace, where its WebApps, its operators'
// lease and its registry ConfigMap live.
type scenario struct {
	t  *testing.T
	ns string
}

// newScenario creates the test's namespace and the operator's Role in it.
// When the test ends (after its operators are stopped) the WebApps'
// finalizers are removed, so that the namespace goes away without an
// operator.
func newScenario(t *testing.T) *scenario {
	t.Helper()
	ns := cluster.Namespace(t)
	_, role, err := webapp.RBAC()
	if err != nil {
		t.Fatal(err)
	}
	role.Namespace = ns
	role.ResourceVersion = ""
	binding := &rbacv1.RoleBinding{}
	binding.Name, binding.Namespace = role.Name, ns
	binding.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}
	binding.Subjects = []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: operatorUser}}
	for _, o := range []client.Object{role, binding} {
		if err := cluster.Client().Create(t.Context(), o); err != nil {
			t.Fatalf("create %T: %v", o, err)
		}
	}
	s := &scenario{t: t, ns: ns}
	t.Cleanup(s.releaseFinalizers)
	return s
}

// operatorProc is one webapp operator process and its fault proxy.
type operatorProc struct {
	name   string
	cmd    *exec.Cmd
	proxy  *testkit.FaultProxy
	health string // host:port of /readyz
	log    string // path of its output

	writes *writeLog

	done    chan struct{} // closed when the process exited
	exitErr error         // valid after done
}

// writeLog records when the process's writes (other than its
// leader-election Lease) reached the proxy.
type writeLog struct {
	mu    sync.Mutex
	times []time.Time
}

func (w *writeLog) record(r *http.Request) bool {
	if testkit.IsWrite(r) && !strings.Contains(r.URL.Path, "/leases/") && !strings.HasSuffix(r.URL.Path, "/leases") {
		w.mu.Lock()
		w.times = append(w.times, time.Now())
		w.mu.Unlock()
	}
	return true
}

// requestLog counts requests by method and path class, for a window in
// which the operator should be (almost) idle.
type requestLog struct {
	mu     sync.Mutex
	counts map[string]int
}

// record is a Faults.Match that counts r and injects nothing.
func (l *requestLog) record(r *http.Request) bool {
	key := r.Method + " " + pathClass(r.URL.Path)
	if r.URL.Query().Get("watch") == "true" {
		key += " (watch)"
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.counts == nil {
		l.counts = map[string]int{}
	}
	l.counts[key]++
	return false
}

// reset forgets what was counted.
func (l *requestLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.counts = nil
}

// split returns the event writes, the other requests, and the counts by
// class.
func (l *requestLog) split() (events, other int, counts map[string]int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, n := range l.counts {
		if strings.Contains(k, "events.k8s.io") && !strings.HasPrefix(k, http.MethodGet) {
			events += n
		} else {
			other += n
		}
	}
	return events, other, maps.Clone(l.counts)
}

// pathClass keeps a request path's group, version and resource, dropping
// namespaces and names: /apis/events.k8s.io/v1/events.
func pathClass(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var out []string
	for i := 0; i < len(parts); i++ {
		if parts[i] == "namespaces" && i+2 < len(parts) {
			i++ // skip the namespace's name
			continue
		}
		out = append(out, parts[i])
	}
	// Drop an object's name after the resource: /api/v1/configmaps/x → /api/v1/configmaps.
	base := 2 // api, v1
	if len(out) > 0 && out[0] == "apis" {
		base = 3 // apis, group, version
	}
	if len(out) > base+1 {
		out = append(out[:base+1], out[base+2:]...)
	}
	return "/" + strings.Join(out, "/")
}

// span returns the number of writes and the first and last.
func (w *writeLog) span() (n int, first, last time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.times) == 0 {
		return 0, time.Time{}, time.Time{}
	}
	return len(w.times), w.times[0], w.times[len(w.times)-1]
}

// countSince returns the number of writes at or after t.
func (w *writeLog) countSince(t time.Time) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, wt := range w.times {
		if !wt.Before(t) {
			n++
		}
	}
	return n
}

// operatorOpts are the flags of one operator process.
type operatorOpts struct {
	leaderElect bool
	faults      testkit.Faults
}

// startOperator starts the webapp binary as the operator's user, through
// its own fault proxy, and waits until it is ready (its /readyz). The test's
// cleanup kills its process group and closes the proxy; on failure it
// prints the end of its log.
func (s *scenario) startOperator(name string, o operatorOpts) *operatorProc {
	t := s.t
	t.Helper()
	userCfg, err := cluster.UserConfig(operatorUser)
	if err != nil {
		t.Fatal(err)
	}
	p := &operatorProc{name: name, writes: &writeLog{}, done: make(chan struct{})}
	o.faults.Match = wrapMatch(o.faults.Match, p.writes)
	if p.proxy, err = testkit.StartFaultProxy(userCfg, o.faults); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.proxy.Close) // after the process is gone: cleanups run last first
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := p.proxy.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	ports, err := testkit.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	p.health = "127.0.0.1:" + strconv.Itoa(ports[0])
	p.log = filepath.Join(dir, name+".log")
	logFile, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--namespace=" + s.ns,
		"--selector=" + runLabel + "=" + s.ns,
		"--health-port=" + strconv.Itoa(ports[0]),
		"--metrics-port=-1",
		"--leader-elect=" + strconv.FormatBool(o.leaderElect),
	}
	p.cmd = exec.Command(operatorBin, args...)
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	// Its own process group, killed as a whole; and killed if this test
	// binary dies without running its cleanups.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		_ = logFile.Close()
		t.Fatal(err)
	}
	go func() {
		p.exitErr = p.cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
		if t.Failed() {
			t.Logf("operator %s log (last lines):\n%s", name, tail(p.log, 40))
		}
	})

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	for {
		if ready(ctx, "http://"+p.health+"/readyz") {
			return p
		}
		select {
		case <-p.done:
			t.Fatalf("operator %s exited before it was ready (%v):\n%s", name, p.exitErr, tail(p.log, 40))
		case <-ctx.Done():
			t.Fatalf("operator %s not ready within 2m:\n%s", name, tail(p.log, 40))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// wrapMatch makes a Faults.Match that records writes and then applies the
// scenario's own match.
func wrapMatch(match func(*http.Request) bool, w *writeLog) func(*http.Request) bool {
	return func(r *http.Request) bool {
		w.record(r)
		return match == nil || match(r)
	}
}

// setFaults changes the proxy's faults, keeping the write log.
func (p *operatorProc) setFaults(f testkit.Faults) {
	f.Match = wrapMatch(f.Match, p.writes)
	p.proxy.SetFaults(f)
}

// signal sends sig to the process.
func (p *operatorProc) signal(sig syscall.Signal) error {
	return p.cmd.Process.Signal(sig)
}

// wait waits up to d for the process to exit and returns its exit code
// (-1 if it was killed by a signal), or an error if it is still running.
func (p *operatorProc) wait(d time.Duration) (int, error) {
	select {
	case <-p.done:
	case <-time.After(d):
		return 0, fmt.Errorf("operator %s still running after %s", p.name, d)
	}
	var ee *exec.ExitError
	switch {
	case p.exitErr == nil:
		return 0, nil
	case errors.As(p.exitErr, &ee):
		return ee.ExitCode(), nil
	default:
		return 0, p.exitErr
	}
}

func ready(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// leaseHolder returns the holder of the scenario's leader-election Lease
// ("" when there is none or it was released).
func (s *scenario) leaseHolder(ctx context.Context) string {
	var l coordinationv1.Lease
	if err := cluster.Client().Get(ctx, client.ObjectKey{Namespace: s.ns, Name: leaseName}, &l); err != nil {
		return ""
	}
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// waitLease polls until the Lease is held by someone for whom ok is true,
// and returns the holder and how long it took.
func (s *scenario) waitLease(ctx context.Context, timeout time.Duration, ok func(holder string) bool) (string, time.Duration, error) {
	start := time.Now()
	for {
		if h := s.leaseHolder(ctx); h != "" && ok(h) {
			return h, time.Since(start), nil
		}
		if time.Since(start) > timeout {
			return "", time.Since(start), fmt.Errorf("lease %s/%s: no new holder within %s (holder %q)", s.ns, leaseName, timeout, s.leaseHolder(ctx))
		}
		select {
		case <-ctx.Done():
			return "", time.Since(start), ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
