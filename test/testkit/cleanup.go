package testkit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// goStopTimeout bounds how long Stop waits for a function started with Go
// to return after its context ended: longer than the graceful-shutdown
// windows operators use (kopgo's and controller-runtime's default is 30 s).
const goStopTimeout = time.Minute

// Cleanup registers f to run when the cluster stops, before any of its
// components stops: [Cluster.Stop] runs the registered functions one at a
// time, last registered first, as [testing.T.Cleanup] does. It is how a
// suite that started something against the cluster in [Main] stops it
// first:
//
//	testkit.Main(m, opts, func(c *testkit.Cluster) {
//		cluster = c
//		conn := openSomething(c.Config)
//		c.Cleanup(func() { conn.Close() })
//	})
//
// For a goroutine (an operator, a manager), [Cluster.Go] does the
// cancelling and the waiting. If the cluster is already stopping, f runs at
// once. Cleanup is safe for concurrent use.
//
// In a test, [testing.T.Cleanup] already runs last registered first: what
// a test starts after [Cluster.Namespace] (or after t.Cleanup(c.Stop) for a
// cluster of its own) stops before its namespace is deleted (or its cluster
// stopped) when it registers its own stop with t.Cleanup.
func (c *Cluster) Cleanup(f func()) {
	c.mu.Lock()
	if !c.stopping {
		c.cleanups = append(c.cleanups, f)
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	f()
}

// Go runs f in a new goroutine with a context that is cancelled when the
// cluster stops, and makes [Cluster.Stop] wait for f to return before it
// stops any component (at most a minute; after that Stop goes on and
// [Cluster.Err] says so). It is the way to run an operator for a whole
// suite:
//
//	testkit.Main(m, opts, func(c *testkit.Cluster) {
//		cluster = c
//		mgr := newManager(c.Config)
//		c.Go(mgr.Start) // stops before the API server does
//	})
//
// An error that f returns, other than the end of its context, is printed
// to standard error at once and kept for [Cluster.Err]; [Main] then exits
// 1 even if every test passed. Go is registered as a [Cluster.Cleanup]
// function, so it stops in turn with them, last registered first.
func (c *Cluster) Go(f func(ctx context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := f(ctx)
		if err == nil || (ctx.Err() != nil && errors.Is(err, context.Canceled)) {
			return
		}
		fmt.Fprintf(os.Stderr, "testkit: a function started with Cluster.Go returned: %v\n", err)
		c.addErr(err)
	}()
	c.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(goStopTimeout):
			err := fmt.Errorf("a function started with Cluster.Go did not return within %s of the end of its context; the cluster stopped under it", goStopTimeout)
			fmt.Fprintf(os.Stderr, "testkit: %v\n", err)
			c.addErr(err)
		}
	})
}

// Err returns the errors of the functions started with [Cluster.Go] (those
// that returned one, or did not return in time when the cluster stopped),
// joined; nil when there were none. It is complete once [Cluster.Stop] has
// returned.
func (c *Cluster) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return errors.Join(c.errs...)
}

func (c *Cluster) addErr(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs = append(c.errs, err)
}

// runCleanups marks the cluster as stopping (from then on Cleanup runs its
// function at once) and runs the registered functions, last registered
// first. It returns the first panic's value, after running the others.
func (c *Cluster) runCleanups() (panicked any) {
	for {
		c.mu.Lock()
		c.stopping = true
		n := len(c.cleanups)
		if n == 0 {
			c.mu.Unlock()
			return panicked
		}
		f := c.cleanups[n-1]
		c.cleanups = c.cleanups[:n-1]
		c.mu.Unlock()
		func() {
			defer func() {
				if r := recover(); r != nil && panicked == nil {
					panicked = r
				}
			}()
			f()
		}()
	}
}
