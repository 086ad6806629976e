package testkit

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// reaperEnv names the environment variable that turns a re-executed copy of
// the current binary into the cluster's reaper. Its value is the cluster's
// working directory.
const reaperEnv = "KOPGO_TESTKIT_REAPER_DIR"

// A test binary can die without running any deferred code: a panic in a test,
// `go test -timeout`, os.Exit, SIGKILL. Its control plane must not outlive it.
// So each Cluster starts a reaper: a copy of the current binary, in its own
// process group, that reads the component PIDs from a pipe. The pipe closes
// when the Cluster stops or when its process dies for any reason (the kernel
// closes the write end); the reaper then kills every registered component
// still running and removes the working directory.
func init() {
	if dir := os.Getenv(reaperEnv); dir != "" {
		reap(dir, os.Stdin)
		os.Exit(0)
	}
}

type reaper struct {
	mu     sync.Mutex
	cmd    *exec.Cmd
	pipe   io.WriteCloser
	exited chan struct{}
}

func startReaper(dir string) (*reaper, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own executable for the reaper: %w", err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), reaperEnv+"="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pipe, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("reaper pipe: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start reaper: %w", err)
	}
	r := &reaper{cmd: cmd, pipe: pipe, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(r.exited)
	}()
	return r, nil
}

// watch registers a component's PID (its process group) with the reaper.
func (r *reaper) watch(pid int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pipe != nil {
		_, _ = fmt.Fprintf(r.pipe, "%d\n", pid)
	}
}

// close tells the reaper that the cluster stopped and waits for its cleanup.
func (r *reaper) close() {
	r.mu.Lock()
	if r.pipe != nil {
		_ = r.pipe.Close()
		r.pipe = nil
	}
	r.mu.Unlock()
	select {
	case <-r.exited:
	case <-time.After(30 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.exited
	}
}

// reap runs in the reaper process: it waits for the pipe to close, then kills
// what is left of the cluster and removes its directory.
func reap(dir string, in io.Reader) {
	var pids []int
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if pid, err := strconv.Atoi(sc.Text()); err == nil {
			pids = append(pids, pid)
		}
	}
	var killed []int
	for _, pid := range pids {
		if belongsTo(pid, dir) {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			_ = syscall.Kill(pid, syscall.SIGKILL)
			killed = append(killed, pid)
		}
	}
	// Wait until each one has closed its files (its listening ports): a dying
	// process loses its command line before it closes its sockets, so wait on
	// the PID's state, not on the command line.
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range killed {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	}
	_ = os.RemoveAll(dir)
}

// belongsTo reports whether pid is a live process whose command line
// mentions dir: every component is started with paths under the cluster's
// directory, so a recycled PID is never killed by mistake.
func belongsTo(pid int, dir string) bool {
	if !alive(pid) {
		return false
	}
	cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return err == nil && bytes.Contains(cmdline, []byte(dir))
}

// alive reports whether any thread of pid is still running. A process that
// is being killed turns its main thread into a zombie first; its open files,
// listening sockets among them, are closed only when its last thread ends.
func alive(pid int) bool {
	tasks, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
	if err != nil {
		return false
	}
	for _, task := range tasks {
		stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", task.Name(), "stat"))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 || i+2 >= len(stat) || (stat[i+2] != 'Z' && stat[i+2] != 'X') {
			return true
		}
	}
	return false
}

// processesUnder lists live processes whose command line mentions dir. The
// testkit's own tests use it to prove that nothing is left behind.
func processesUnder(dir string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if belongsTo(pid, dir) {
			pids = append(pids, pid)
		}
	}
	return pids
}
