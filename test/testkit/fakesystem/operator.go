package fakesystem

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Build compiles the main package pkg (an import path, or a directory
// relative to the test's package such as "../cmd/operator") with
// `go build` into the test's temporary directory and returns the binary's
// path. A failed build fails the test with the compiler's output.
func Build(tb testing.TB, pkg string) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), filepath.Base(strings.TrimSuffix(pkg, "/")))
	out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput()
	if err != nil {
		tb.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// Operator is an operator run as a child process that a test can SIGKILL
// and start again. Its output goes to one log file per start, in the
// test's temporary directory.
type Operator struct {
	tb   testing.TB
	tmpl *exec.Cmd
	dir  string

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{} // closed when cmd has exited
	starts int
	kills  int
	logs   []string
	ended  bool // the test's cleanup ran: start no more
}

// errEnded is start's error once the test has ended.
var errEnded = errors.New("the test has ended")

// StartOperator starts cmd as an operator process. cmd is a template: its
// Path, Args, Env and Dir are used for this start and every restart. To
// run the test binary itself as the operator, re-execute it with a
// variable its TestMain checks:
//
//	cmd := exec.Command(os.Args[0], "-test.run=^$")
//	cmd.Env = append(os.Environ(), "MY_OPERATOR=1", "KUBECONFIG="+cluster.Kubeconfig, "SYSTEM_URL="+sys.URL())
//	op := fakesystem.StartOperator(t, cmd)
//
// The operator runs in its own process group; when the test ends it gets
// SIGTERM (SIGKILL after 10 s) and is waited for, and if the test failed
// the last lines of each start's log are logged. On Linux it is also
// killed when the test binary dies.
func StartOperator(tb testing.TB, cmd *exec.Cmd) *Operator {
	tb.Helper()
	o := &Operator{tb: tb, tmpl: cmd, dir: tb.TempDir()}
	tb.Cleanup(o.cleanup)
	if err := o.start(); err != nil {
		tb.Fatal(err)
	}
	return o
}

func (o *Operator) start() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ended {
		return errEnded
	}
	if o.cmd != nil {
		select {
		case <-o.done:
		default:
			return fmt.Errorf("operator %s: already running (pid %d)", o.tmpl.Path, o.cmd.Process.Pid)
		}
	}
	logPath := filepath.Join(o.dir, fmt.Sprintf("operator-%d.log", o.starts))
	out, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("operator %s: %w", o.tmpl.Path, err)
	}
	cmd := &exec.Cmd{Path: o.tmpl.Path, Args: o.tmpl.Args, Env: o.tmpl.Env, Dir: o.tmpl.Dir, Stdout: out, Stderr: out}
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		_ = out.Close()
		return fmt.Errorf("operator %s: start: %w", o.tmpl.Path, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); _ = out.Close(); close(done) }()
	o.cmd, o.done = cmd, done
	o.starts++
	o.logs = append(o.logs, logPath)
	return nil
}

// signal sends sig to the operator's process group and waits up to grace
// for it to exit (forever for SIGKILL); it reports whether it ran.
func (o *Operator) signal(sig syscall.Signal, grace time.Duration) bool {
	o.mu.Lock()
	cmd, done := o.cmd, o.done
	o.mu.Unlock()
	if cmd == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
	if sig == syscall.SIGKILL {
		<-done
		return true
	}
	select {
	case <-done:
	case <-time.After(grace):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	return true
}

// Kill SIGKILLs the operator (its whole process group) and returns once
// it is gone. It does nothing if the operator is not running.
func (o *Operator) Kill() {
	if o.signal(syscall.SIGKILL, 0) {
		o.mu.Lock()
		o.kills++
		o.mu.Unlock()
	}
}

// Restart kills the operator if it runs and starts it again. A failed
// start fails the test.
func (o *Operator) Restart() {
	o.tb.Helper()
	o.Kill()
	if err := o.start(); err != nil {
		o.tb.Fatal(err)
	}
}

// KillAt arms sys's write hook ([System.OnWrite], replacing any other):
// at the first write that match accepts (nil accepts any), after the
// system changed its store and before it answers, the operator is
// SIGKILLed and started again; the channel returned is closed once the
// new process runs. The hook fires once; it answers the write afterwards
// (to a client that is gone).
func (o *Operator) KillAt(sys *System, match func(Write) bool) <-chan struct{} {
	fire, fired := o.killOnce()
	sys.OnWrite(func(w Write) {
		if match == nil || match(w) {
			fire()
		}
	})
	return fired
}

// KillAfter arms sys's answer hook ([System.OnAnswer], replacing any
// other): at the first answered request that match accepts (nil accepts
// any), once its answer reached the operator, the operator is SIGKILLed
// and started again; the channel returned is closed once the new process
// runs. The hook fires once. Kill there to have the operator die after it
// got a create's answer and before it recorded the ID, or at its first
// read of the resource it created (match on [Answered.Resource] of the
// create, then on the path of the read).
func (o *Operator) KillAfter(sys *System, match func(Answered) bool) <-chan struct{} {
	fire, fired := o.killOnce()
	sys.OnAnswer(func(a Answered) {
		if match == nil || match(a) {
			fire()
		}
	})
	return fired
}

// killOnce returns a function that, the first time it is called, kills
// the operator and starts it again, then closes the channel.
func (o *Operator) killOnce() (func(), <-chan struct{}) {
	fired := make(chan struct{})
	var armed atomic.Bool
	armed.Store(true)
	return func() {
		if !armed.CompareAndSwap(true, false) {
			return
		}
		defer close(fired)
		o.Kill()
		if err := o.start(); err != nil && !errors.Is(err, errEnded) {
			o.tb.Error(err) // on the system's goroutine: Fatal is not allowed here
		}
	}, fired
}

// Starts is how many times the operator was started.
func (o *Operator) Starts() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.starts
}

// Kills is how many times [Operator.Kill] (or a hook of
// [Operator.KillAt]) killed a running operator.
func (o *Operator) Kills() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.kills
}

// Logs returns the paths of the log files, one per start, oldest first.
func (o *Operator) Logs() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.logs...)
}

func (o *Operator) cleanup() {
	o.mu.Lock()
	o.ended = true
	o.mu.Unlock()
	o.signal(syscall.SIGTERM, 10*time.Second)
	if !o.tb.Failed() {
		return
	}
	for _, p := range o.Logs() {
		data, err := os.ReadFile(p)
		if err != nil {
			o.tb.Logf("%s: %v", p, err)
			continue
		}
		lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
		o.tb.Logf("last lines of %s:\n%s", p, bytes.Join(lines[max(0, len(lines)-30):], []byte("\n")))
	}
}
