package testkit_test

import (
	"bufio"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kopgo/kopgo/test/testkit"
)

// TestChildCluster is not a test on its own: the cleanup tests run this
// binary again with childEnv set, and this function then starts a cluster,
// prints where it lives and dies the way childEnv says.
func TestChildCluster(t *testing.T) {
	mode := os.Getenv(childEnv)
	if mode == "" {
		t.Skip("helper for TestClusterIsCleanedUp; runs only as its child process")
	}
	c, err := testkit.Start(t.Context(), testkit.Options{Full: mode == "sigkill-full"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop() // must not be what saves us: panics and timeouts skip it or exit first
	fmt.Printf("DIR=%s\nHOST=%s\n", c.Dir, c.Config.Host)
	// Die only once the parent has seen the cluster running.
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	switch mode {
	case "panic":
		// A panic off the test goroutine ends the binary without running
		// any deferred call, the deferred Stop above included.
		go panic("a goroutine panics with a running cluster")
		time.Sleep(time.Hour)
	case "exit":
		os.Exit(3)
	default: // "timeout" (the parent passes -test.timeout) and "sigkill*"
		time.Sleep(time.Hour)
	}
}

func TestClusterIsCleanedUp(t *testing.T) {
	for _, mode := range []string{"panic", "exit", "timeout", "sigkill", "sigkill-full"} {
		// Sequential: a cluster starting in parallel could take the port this
		// test checks is free.
		t.Run(mode, func(t *testing.T) {
			args := []string{"-test.run=^TestChildCluster$", "-test.v"}
			if mode == "timeout" {
				args = append(args, "-test.timeout=10s")
			}
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = append(os.Environ(), childEnv+"="+mode)
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = cmd.Stdout
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

			var dir, host string
			var out strings.Builder
			sc := bufio.NewScanner(stdout)
			for (dir == "" || host == "") && sc.Scan() {
				line := sc.Text()
				out.WriteString(line + "\n")
				if v, ok := strings.CutPrefix(line, "DIR="); ok {
					dir = v
				}
				if v, ok := strings.CutPrefix(line, "HOST="); ok {
					host = v
				}
			}
			if dir == "" || host == "" {
				t.Fatalf("child did not report its cluster; output:\n%s", out.String())
			}
			pids := testkit.ProcessesUnder(dir)
			if len(pids) < 2 {
				t.Fatalf("child's cluster runs %d processes, want at least etcd and kube-apiserver", len(pids))
			}
			if mode == "sigkill-full" {
				// The full cluster's own processes: the provisioner must
				// go with the rest.
				var names []string
				for _, pid := range pids {
					names = append(names, processName(pid))
				}
				for _, want := range []string{"kube-controller-manager", "kube-scheduler", "kwok", "provisioner"} {
					if !slices.Contains(names, want) {
						t.Fatalf("child's full cluster runs %v, want %s among them", names, want)
					}
				}
			}
			_, _ = stdin.Write([]byte("die\n"))
			if strings.HasPrefix(mode, "sigkill") {
				_ = cmd.Process.Signal(syscall.SIGKILL)
			}
			go func() { _, _ = bufioDrain(sc) }()
			err = cmd.Wait()
			if err == nil {
				t.Fatalf("child exited cleanly, want it to die by %s", mode)
			}

			deadline := time.Now().Add(30 * time.Second)
			for {
				pids := testkit.ProcessesUnder(dir)
				_, statErr := os.Stat(dir)
				if len(pids) == 0 && os.IsNotExist(statErr) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("after the child died (%v): processes %v still run and dir exists=%t", err, pids, statErr == nil)
				}
				time.Sleep(50 * time.Millisecond)
			}
			u, perr := url.Parse(host)
			if perr != nil {
				t.Fatal(perr)
			}
			// Connections the server closed linger in TIME_WAIT for a minute;
			// what must not remain is a listener.
			if listening(t, u.Port()) {
				t.Fatalf("something still listens on the API server port %s after cleanup", u.Port())
			}
		})
	}
}

// listening reports whether a TCP socket listens on port, from /proc/net.
func listening(t *testing.T, port string) bool {
	t.Helper()
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	hexPort := fmt.Sprintf(":%04X", p)
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			// f[1] is the local address:port, f[3] the state; 0A is LISTEN.
			if len(f) > 3 && strings.HasSuffix(f[1], hexPort) && f[3] == "0A" {
				return true
			}
		}
	}
	return false
}

// processName is the base name of pid's executable, from its command line.
func processName(pid int) string {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return ""
	}
	exe, _, _ := strings.Cut(string(cmdline), "\x00")
	return filepath.Base(exe)
}

func bufioDrain(sc *bufio.Scanner) (int, error) {
	n := 0
	for sc.Scan() {
		n++
	}
	return n, sc.Err()
}
