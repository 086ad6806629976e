package ops_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/kopgo/kopgo/test/testkit"
)

// operatorProc is one operator replica: a process of this test binary.
type operatorProc struct {
	controller, instance string
	port                 int
	cmd                  *exec.Cmd
	logPath              string
	done                 chan struct{} // closed once the process exited
}

// procOptions are an operator's settings.
type procOptions struct {
	workers int    // Builder.Concurrency; 0: the default
	lease   string // "lease/renew/retry"; "": controller-runtime's defaults
	// external is the URL of the external system whose resources the
	// operator keeps (an external.Reconciler); "": Sync of children.
	external string
}

// startOperator starts replica instance of controller's operator, adds it
// to m's targets and waits until it serves /metrics. The process is
// killed when the test ends, and dies with the test binary (Pdeathsig).
func startOperator(t *testing.T, m *monitor, c *testkit.Cluster, ns, controller, instance string, o procOptions) *operatorProc {
	t.Helper()
	p := spawnOperator(t, c, ns, controller, instance, o)
	p.await(t, m)
	return p
}

// spawnOperator starts the process; await waits for its metrics.
func spawnOperator(t *testing.T, c *testkit.Cluster, ns, controller, instance string, o procOptions) *operatorProc {
	t.Helper()
	ports, err := testkit.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	p := &operatorProc{controller: controller, instance: instance, port: ports[0], done: make(chan struct{}),
		logPath: filepath.Join(logDir(t), instance+".log")}
	out, err := os.Create(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(os.Args[0], "-test.run=^$")
	p.cmd.Env = append(os.Environ(),
		operatorEnv+"="+controller, kubeconfigEnv+"="+c.Kubeconfig, portEnv+"="+strconv.Itoa(p.port),
		namespaceEnv+"="+ns, leaseEnv+"="+o.lease)
	if o.external != "" {
		p.cmd.Env = append(p.cmd.Env, externalEnv+"="+o.external)
	}
	if o.workers > 0 {
		p.cmd.Env = append(p.cmd.Env, workersEnv+"="+strconv.Itoa(o.workers))
	}
	p.cmd.Stdout, p.cmd.Stderr = out, out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		_ = out.Close()
		t.Fatalf("start operator %s: %v", instance, err)
	}
	go func() {
		_ = p.cmd.Wait()
		_ = out.Close()
		close(p.done)
	}()
	t.Cleanup(func() { p.stop(syscall.SIGKILL) })
	return p
}

// await waits until p serves /metrics, then adds it to m's targets.
func (p *operatorProc) await(t *testing.T, m *monitor) {
	t.Helper()
	instance := p.instance
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", p.port)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-p.done:
			t.Fatalf("operator %s exited before serving metrics; its log: %s", instance, tail(p.logPath))
		case <-ctx.Done():
			t.Fatalf("operator %s serves no metrics after 30s; its log: %s", instance, tail(p.logPath))
		case <-time.After(100 * time.Millisecond):
		}
	}
	m.add(instance, p.port)
}

// stop sends sig and waits for the process to exit, killing it after 15 s.
func (p *operatorProc) stop(sig syscall.Signal) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// exited reports whether the process has exited.
func (p *operatorProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// logDir is where the operators' logs go: a directory the test removes,
// kept when KOPGO_OPS_KEEP_LOGS names another.
func logDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("KOPGO_OPS_KEEP_LOGS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err == nil {
			return d
		}
	}
	return t.TempDir()
}

// tail is the end of a log file, for a failure message.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return "\n" + string(b)
}
