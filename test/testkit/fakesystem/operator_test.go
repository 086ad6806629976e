package fakesystem_test

import (
	"errors"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kopgo/kopgo/test/testkit/fakesystem"
)

// clientCmd is the test binary run as a client that creates one resource.
func clientCmd(sys *fakesystem.System) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=client", urlEnv+"="+sys.URL())
	return cmd
}

var pidLine = regexp.MustCompile(`pid (\d+)`)

// pids reads the PIDs the processes wrote at the start of their logs.
func pids(t *testing.T, op *fakesystem.Operator) []int {
	t.Helper()
	var out []int
	for _, p := range op.Logs() {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if m := pidLine.FindSubmatch(data); m != nil {
			n, _ := strconv.Atoi(string(m[1]))
			out = append(out, n)
		}
	}
	return out
}

func gone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

// The client process is SIGKILLed after the system stored its create and
// before the answer, and started again: it creates again (it has no Find),
// which the system shows as a second resource with the same tag.
func TestKillAtWrite(t *testing.T) {
	sys := fakesystem.Start(t, fakesystem.Options{})
	var started []int
	t.Cleanup(func() { // runs after the Operator's own cleanup
		for _, pid := range started {
			if !gone(pid) {
				t.Errorf("process %d still runs after the test", pid)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	op := fakesystem.StartOperator(t, clientCmd(sys))
	killed := op.KillAt(sys, func(w fakesystem.Write) bool { return w.Method == http.MethodPost })
	select {
	case <-killed:
	case <-time.After(60 * time.Second):
		t.Fatal("the client was not killed at its create within 60 s")
	}
	eventually(t, "the restarted client's create", func() error {
		if n := len(sys.Find("child")); n != 2 {
			return errors.New(strconv.Itoa(n) + " resources")
		}
		return nil
	})
	if s, k := op.Starts(), op.Kills(); s != 2 || k != 1 {
		t.Errorf("starts %d, kills %d; want 2 and 1", s, k)
	}
	first := pids(t, op)
	if len(first) != 2 || !gone(first[0]) || gone(first[1]) {
		t.Fatalf("pids %v: want the first gone, the second running", first)
	}

	op.Kill()
	op.Kill() // nothing runs: not counted
	op.Restart()
	eventually(t, "the third client's create", func() error {
		if n := len(sys.Find("child")); n != 3 {
			return errors.New(strconv.Itoa(n) + " resources")
		}
		return nil
	})
	if s, k := op.Starts(), op.Kills(); s != 3 || k != 2 {
		t.Errorf("starts %d, kills %d; want 3 and 2", s, k)
	}
	started = pids(t, op)
}

// The client process is SIGKILLed once its create's answer reached it,
// and started again: it creates again, a second resource with the tag;
// the answer killed at was logged 201 before the kill.
func TestKillAfterAnswer(t *testing.T) {
	sys := fakesystem.Start(t, fakesystem.Options{})
	op := fakesystem.StartOperator(t, clientCmd(sys))
	var logged atomic.Int64 // the match runs on the system's goroutines
	killed := op.KillAfter(sys, func(a fakesystem.Answered) bool {
		if a.Method != http.MethodPost || a.Status != http.StatusCreated || a.Resource == nil {
			return false
		}
		logged.CompareAndSwap(0, int64(sys.Count(http.MethodPost, "")))
		return true
	})
	select {
	case <-killed:
	case <-time.After(60 * time.Second):
		t.Fatal("the client was not killed after its create's answer within 60 s")
	}
	eventually(t, "the restarted client's create", func() error {
		if n := len(sys.Find("child")); n != 2 {
			return errors.New(strconv.Itoa(n) + " resources")
		}
		return nil
	})
	if s, k := op.Starts(), op.Kills(); s != 2 || k != 1 || logged.Load() != 1 {
		t.Errorf("starts %d, kills %d, creates logged at the kill %d; want 2, 1, 1", s, k, logged.Load())
	}
	if p := pids(t, op); len(p) != 2 || !gone(p[0]) || gone(p[1]) {
		t.Errorf("pids %v: want the first gone, the second running", p)
	}
}

// failingEnv runs TestFailingWithAnOperator, a test that fails on purpose
// with an operator running, in a child test binary.
const failingEnv = "FAKESYSTEM_TEST_FAILING"

func TestFailingWithAnOperator(t *testing.T) {
	if os.Getenv(failingEnv) == "" {
		t.Skip("run by TestCleanupWhenTheTestFails")
	}
	sys := fakesystem.Start(t, fakesystem.Options{})
	fakesystem.StartOperator(t, clientCmd(sys))
	eventually(t, "the create", func() error {
		if len(sys.Find("child")) != 1 {
			return errors.New("not yet")
		}
		return nil
	})
	t.Fatal("failing on purpose")
}

// A test that fails leaves no operator process behind, and its log
// shows the operator's last lines.
func TestCleanupWhenTheTestFails(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestFailingWithAnOperator$", "-test.v")
	cmd.Env = append(os.Environ(), failingEnv+"=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("the failing test: %v, want exit code 1:\n%s", err, out)
	}
	m := pidLine.FindSubmatch(out)
	if m == nil {
		t.Fatalf("no operator log in the failing test's output:\n%s", out)
	}
	pid, _ := strconv.Atoi(string(m[1]))
	if !gone(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("operator process %d outlived its failed test", pid)
	}
}

// Build compiles a main package; the binary runs as an operator.
func TestBuild(t *testing.T) {
	sys := fakesystem.Start(t, fakesystem.Options{})
	bin := fakesystem.Build(t, "./testdata/client")
	op := fakesystem.StartOperator(t, exec.Command(bin, sys.URL()))
	eventually(t, "the built client's create", func() error {
		if n := len(sys.Find("built")); n != 1 {
			return errors.New(strconv.Itoa(n) + " resources")
		}
		return nil
	})
	if n := op.Starts(); n != 1 {
		t.Errorf("started %d times", n)
	}
}
