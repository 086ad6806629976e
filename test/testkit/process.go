package testkit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is one component of the cluster: a binary, its arguments and a log
// file. It runs in its own process group so that stopping it also stops
// anything it started, and it is registered with the reaper so that it dies
// with the test binary even when the test binary itself is killed.
type process struct {
	name    string
	path    string
	args    []string
	logPath string
	reaper  *reaper

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	err  error // exit error, valid after done is closed
}

func (p *process) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return fmt.Errorf("%s is already running", p.name)
	}
	logFile, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open log of %s: %w", p.name, err)
	}
	fmt.Fprintf(logFile, "--- %s: starting %s %s\n", time.Now().Format(time.RFC3339Nano), p.path, strings.Join(p.args, " "))
	cmd := exec.Command(p.path, p.args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	if p.reaper != nil {
		p.reaper.watch(cmd.Process.Pid)
	}
	done := make(chan struct{})
	p.cmd, p.done = cmd, done
	go func() {
		err := cmd.Wait()
		_ = logFile.Close()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(done)
	}()
	return nil
}

// exited reports whether the process has ended, and how.
func (p *process) exited() (bool, error) {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if done == nil {
		return true, nil
	}
	select {
	case <-done:
		p.mu.Lock()
		defer p.mu.Unlock()
		return true, p.err
	default:
		return false, nil
	}
}

// stop sends SIGTERM to the process group and SIGKILL after grace. It returns
// once the process has been reaped, so its ports are free afterwards.
func (p *process) stop(grace time.Duration) {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.cmd = nil
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	pgid := -cmd.Process.Pid
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(grace):
		_ = syscall.Kill(pgid, syscall.SIGKILL)
		<-done
	}
	// Whatever the component started in its group goes with it.
	_ = syscall.Kill(pgid, syscall.SIGKILL)
}

// tail returns the last n lines of the process's log, for error messages.
func (p *process) tail(n int) string {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// failure describes why a component did not become ready: the cause and the
// last lines of its log.
func (p *process) failure(cause error) error {
	if ok, exitErr := p.exited(); ok && exitErr != nil {
		cause = fmt.Errorf("%w (process exited: %w)", cause, exitErr)
	}
	return fmt.Errorf("%s did not become ready: %w\nlast lines of %s:\n%s", p.name, cause, p.logPath, p.tail(20))
}

// waitFor polls check until it succeeds, the process exits, or ctx ends.
func (p *process) waitFor(ctx context.Context, what string, check func(context.Context) error) error {
	var last error
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if ok, _ := p.exited(); ok {
			return p.failure(errors.New("it exited"))
		}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		last = check(cctx)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return p.failure(fmt.Errorf("waiting for %s: %w (last check: %w)", what, ctx.Err(), last))
		case <-tick.C:
		}
	}
}
