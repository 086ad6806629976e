package reliability_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	webappv1 "github.com/kopgo/kopgo/examples/webapp/api/v1alpha1"
	"github.com/kopgo/kopgo/examples/webapp/operator"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/testkit"
)

// productionFaults are what the fault-proxy scenario injects: every kind of
// fault the proxy has, at rates far above a healthy cluster's.
var productionFaults = testkit.Faults{
	Seed:              1,
	ResetBeforeServer: 0.03,
	TooManyRequests:   0.02,
	Error500:          0.05,
	ResetAfterServer:  0.03,
	Latency:           0.2, Delay: 20 * time.Millisecond, Jitter: 200 * time.Millisecond,
	DropWatch: 1, WatchLifetime: 5 * time.Second, // every watch cut within 5 s
}

const faultsSummary = "5% 500, 2% 429, 3% reset before, 3% reset after, 20% +20–220 ms, every watch cut ≤5 s"

// Scenario 1: the operator behind the fault proxy converges, and once the
// faults stop it falls quiet. Its requests are compared with a fault-free
// run of the same load.
func TestFaultProxy(t *testing.T) {
	var clean int64
	t.Run("fault-free", func(t *testing.T) {
		s := newScenario(t)
		op := s.startOperator("clean", operatorOpts{})
		s.createParents(t.Context(), 0, load.parents)
		took := s.waitConverged(t.Context(), load.parents, checkOptions{})
		clean = op.proxy.Stats().Requests
		report(t, result{"1. fault proxy: baseline", load.String(), "none", "",
			fmt.Sprintf("converged in %.0fs, %d requests", took.Seconds(), clean)})
	})
	t.Run("faults", func(t *testing.T) {
		s := newScenario(t)
		op := s.startOperator("faulty", operatorOpts{faults: productionFaults})
		s.createParents(t.Context(), 0, load.parents)
		sentinel := secretSentinel(t, s)
		took := s.waitConverged(t.Context(), load.parents, checkOptions{})
		st := op.proxy.Stats()
		t.Logf("converged in %s through %v", took.Round(time.Second), st)

		// Quiet: faults off; watches cut before are re-established within
		// their lifetime; then the operator should send (almost) nothing.
		var quietLog requestLog
		op.setFaults(testkit.Faults{Match: quietLog.record})
		time.Sleep(productionFaults.WatchLifetime + time.Second)
		quietLog.reset()
		before := op.proxy.Stats().Requests
		time.Sleep(load.quiet)
		quiet := op.proxy.Stats().Requests - before
		// Events the faults kept from the server (a refused or lost create,
		// a count not yet written) are retried at the recorder's next
		// interval, at most every 30 s, so some land in the quiet window:
		// the truth about what happened, not new work. They are bounded by
		// one per event series (at most one per parent here); everything
		// else must be (almost) nothing.
		events, other, top := quietLog.split()
		t.Logf("quiet %s: %d requests: %d event writes, %d others %v", load.quiet, quiet, events, other, top)
		if other > 10 {
			t.Errorf("%d requests other than event writes in the quiet %s after convergence, want at most 10: %v", other, load.quiet, top)
		}
		if events > load.parents {
			t.Errorf("%d event writes in the quiet %s after convergence, want at most one per parent (%d)", events, load.quiet, load.parents)
		}
		if p := s.problems(t.Context(), load.parents, checkOptions{}); len(p) > 0 {
			t.Errorf("after the quiet window: %s", strings.Join(p, "; "))
		}
		noSecretIn(t, s, op.log, sentinel)
		multiple := ""
		if clean > 0 {
			multiple = fmt.Sprintf(" (%.1f× the fault-free run)", float64(st.Requests)/float64(clean))
		}
		report(t, result{"1. fault proxy", load.String(), faultsSummary, "",
			fmt.Sprintf("converged in %.0fs, %d requests%s, %d faults injected; %d requests in the quiet %s after (%d of them event writes the faults had held back)",
				took.Seconds(), st.Requests, multiple, st.Injected(), quiet, load.quiet, events)})
	})
}

// Scenario 2: the API server stops mid-convergence and comes back; the
// operator (without leader election) resumes promptly and converges.
func TestAPIServerRestart(t *testing.T) {
	s := newScenario(t)
	s.startOperator("restart", operatorOpts{})
	s.createParents(t.Context(), 0, load.parents)
	// Mid-convergence: some WebApps done, most not.
	_ = wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var apps webappv1.WebAppList
		if err := cluster.Client().List(ctx, &apps, client.InNamespace(s.ns)); err != nil {
			return false, nil
		}
		n := 0
		for i := range apps.Items {
			if apps.Items[i].Status.ObservedGeneration > 0 {
				n++
			}
		}
		return n >= max(1, load.parents/10), nil
	})

	stopped := true
	cluster.StopAPIServer()
	t.Cleanup(func() { // never leave the cluster without its API server
		if stopped {
			_ = cluster.StartAPIServer(context.Background())
		}
	})
	time.Sleep(load.outage)
	if err := cluster.StartAPIServer(t.Context()); err != nil {
		t.Fatal(err)
	}
	stopped = false
	back := time.Now()

	// The first reconcile after the outage: a spec change must reach
	// status (observedGeneration) through the operator's watches and queue.
	probe := &webappv1.WebApp{}
	var gen int64
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := cluster.Client().Get(ctx, client.ObjectKey{Namespace: s.ns, Name: parentName(0)}, probe); err != nil {
			return false, nil
		}
		probe.Spec.Config["GREETING"] = "after the outage"
		if err := cluster.Client().Update(ctx, probe); err != nil {
			return false, nil
		}
		gen = probe.Generation
		return true, nil
	})
	if err != nil {
		t.Fatalf("update a WebApp after the restart: %v", err)
	}
	err = wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		err := cluster.Client().Get(ctx, client.ObjectKeyFromObject(probe), probe)
		return err == nil && probe.Status.ObservedGeneration >= gen, nil
	})
	if err != nil {
		t.Fatalf("WebApp %s: generation %d not reconciled within 2m of the API server's return", probe.Name, gen)
	}
	firstReconcile := time.Since(back)
	healed := s.healPods(t)
	took := s.waitConverged(t.Context(), load.parents, checkOptions{})
	// Whether the operator or the cluster set the pace: when the last
	// Deployment became Available, and the last WebApp Ready.
	lastDeployment, lastReady := s.lastTransitions(t.Context())
	report(t, result{"2. API server restart mid-convergence", load.String(),
		fmt.Sprintf("API server down %s", load.outage), "",
		fmt.Sprintf("first reconcile %.1fs after the API server was back; all converged %.0fs after (last Deployment Available at +%.0fs, last WebApp Ready at +%.0fs; %d pods set Ready again, see healPods)",
			firstReconcile.Seconds(), (firstReconcile + took).Seconds(), lastDeployment.Sub(back).Seconds(), lastReady.Sub(back).Seconds(), healed.Load())})
}

// Scenario 2b: with leader election, an outage longer than the renew
// deadline (controller-runtime's default 10 s) ends the process: it can no
// longer prove it is the only writer. The exit is the documented behaviour
// (exit 1, "leader election lost"); its replacement takes over. The outage
// is the proxy's pause: this process alone loses the API server.
func TestLeaderElectionLostOnOutage(t *testing.T) {
	s := newScenario(t)
	op := s.startOperator("leader", operatorOpts{leaderElect: true})
	if _, _, err := s.waitLease(t.Context(), time.Minute, func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	s.createParents(t.Context(), 0, min(load.parents, 5))
	start := time.Now()
	op.proxy.Pause()
	code, err := op.wait(time.Minute)
	lost := time.Since(start)
	op.proxy.Resume()
	if err != nil {
		t.Fatal(err)
	}
	log := tail(op.log, 200)
	if code != 1 || !strings.Contains(log, "leader election lost") {
		t.Fatalf("exit code %d, want 1 with \"leader election lost\":\n%s", code, tail(op.log, 20))
	}
	// Its replacement takes over and converges.
	s.startOperator("replacement", operatorOpts{leaderElect: true})
	took := s.waitConverged(t.Context(), min(load.parents, 5), checkOptions{})
	report(t, result{"2b. outage > renew deadline, leader election", "5 WebApps", "proxy paused (this process cut off)", "",
		fmt.Sprintf("exit 1 \"leader election lost\" %.1fs into the outage; replacement converged in %.0fs", lost.Seconds(), took.Seconds())})
}

// Scenario 3: two replicas with leader election. SIGKILL of the leader: the
// standby takes over once the lease expires; SIGTERM of the leader: it
// releases the lease and the standby takes over at once. Never two writers.
func TestLeaderFailover(t *testing.T) {
	const leaseDuration, retryPeriod = 15 * time.Second, 2 * time.Second // controller-runtime's defaults
	ctx := t.Context()
	s := newScenario(t)
	a := s.startOperator("a", operatorOpts{leaderElect: true})
	idA, _, err := s.waitLease(ctx, time.Minute, func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	b := s.startOperator("b", operatorOpts{leaderElect: true})
	s.createParents(ctx, 0, load.parents)
	s.waitConverged(ctx, load.parents, checkOptions{})
	if n, _, _ := b.writes.span(); n > 0 {
		t.Errorf("standby b wrote %d times while a led", n)
	}

	// SIGKILL: the lease stays held until it expires.
	killed := time.Now()
	if err := a.signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _ = a.wait(10 * time.Second)
	_, lastA, _ := a.writes.span()
	// New work after each failover: a quarter more WebApps, within the
	// Service range (maxParents in all).
	more := max(1, min(load.parents/4, (maxParents-load.parents)/2))
	s.createParents(ctx, load.parents, load.parents+more)
	idB, _, err := s.waitLease(ctx, 2*leaseDuration, func(h string) bool { return h != idA })
	if err != nil {
		t.Fatal(err)
	}
	killTakeover := time.Since(killed)
	// client-go's elector takes over once it has seen the same record for
	// the lease duration, counted from when it last saw the record change
	// (up to one jittered retry period, 1.2 × 2 s, before the kill), and
	// tries every jittered retry period: lease duration + 2 jittered retry
	// periods, plus slack for a loaded machine.
	if limit := leaseDuration + 2*retryPeriod*12/10 + 5*time.Second; killTakeover > limit {
		t.Errorf("after SIGKILL, b took over in %s, want within the lease duration + two retry periods (+5 s slack): %s", killTakeover, limit)
	}
	total := load.parents + more
	s.waitConverged(ctx, total, checkOptions{})
	if n, firstB, _ := b.writes.span(); n == 0 || firstB.Before(killed) {
		t.Errorf("b: %d writes, first at %s, want writes only after a was killed at %s", n, firstB.Format(time.StampMilli), killed.Format(time.StampMilli))
	}
	_ = lastA

	// SIGTERM: the lease is released as the process exits.
	c := s.startOperator("c", operatorOpts{leaderElect: true})
	if n, _, _ := c.writes.span(); n > 0 {
		t.Errorf("standby c wrote %d times while b led", n)
	}
	termed := time.Now()
	if err := b.signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	s.createParents(ctx, total, total+more)
	total += more
	if _, _, err := s.waitLease(ctx, 2*leaseDuration, func(h string) bool { return h != idB }); err != nil {
		t.Fatal(err)
	}
	termTakeover := time.Since(termed)
	code, err := b.wait(time.Minute)
	if err != nil || code != 0 {
		t.Errorf("b after SIGTERM: exit code %d, %v; want 0", code, err)
	}
	if termTakeover >= leaseDuration {
		t.Errorf("after SIGTERM, c took over in %s: the lease was not released (it expired)", termTakeover)
	}
	s.waitConverged(ctx, total, checkOptions{})
	_, _, lastB := b.writes.span()
	nC, firstC, _ := c.writes.span()
	if nC == 0 || !firstC.After(lastB) {
		t.Errorf("two writers at once: b's last write at %s, c's first at %s (%d writes)", lastB.Format(time.StampMilli), firstC.Format(time.StampMilli), nC)
	}
	t.Logf("b's last write %s after SIGTERM; c's first write %s after it", lastB.Sub(termed), firstC.Sub(termed))
	report(t, result{"3. leader failover, 2 replicas", fmt.Sprintf("%d WebApps", total), "SIGKILL, then SIGTERM of the leader", "",
		fmt.Sprintf("SIGKILL: takeover in %.1fs (lease %s, retry %s); SIGTERM: exit 0, takeover in %.1fs; writers never overlapped (c's first write %.1fs after b's last)",
			killTakeover.Seconds(), leaseDuration, retryPeriod, termTakeover.Seconds(), firstC.Sub(lastB).Seconds())})
}

// Scenario 4: SIGTERM while slow reconciles are in flight: the process
// drains them and exits 0 within its window; no WebApp's status is
// half-written (each is either untouched or a complete status of its
// generation); a new process then converges.
func TestGracefulShutdown(t *testing.T) {
	ctx := t.Context()
	s := newScenario(t)
	slow := testkit.Faults{Seed: 4, Match: testkit.IsWrite, Latency: 1, Delay: 500 * time.Millisecond, Jitter: time.Second}
	op := s.startOperator("slow", operatorOpts{leaderElect: true, faults: slow})
	s.createParents(ctx, 0, load.parents)
	time.Sleep(3 * time.Second) // reconciles in flight, their writes delayed
	inflightWrites := op.writes.countSince(time.Now().Add(-time.Second))
	termed := time.Now()
	if err := op.signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code, err := op.wait(45 * time.Second) // 30 s graceful shutdown + slack
	exit := time.Since(termed)
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0:\n%s", code, tail(op.log, 20))
	}
	var apps webappv1.WebAppList
	if err := cluster.Client().List(ctx, &apps, client.InNamespace(s.ns)); err != nil {
		t.Fatal(err)
	}
	complete, untouched := 0, 0
	for i := range apps.Items {
		app := &apps.Items[i]
		st := app.Status
		switch {
		case st.ObservedGeneration == 0 && len(st.Conditions) == 0 && st.URL == "":
			untouched++
		case st.ObservedGeneration == app.Generation && st.URL != "" && status.Get(app, status.Ready) != nil:
			complete++
		default:
			t.Errorf("WebApp %s: half-written status %+v", app.Name, st)
		}
	}
	if s.leaseHolder(ctx) != "" {
		t.Errorf("lease still held after exit 0")
	}
	s.startOperator("after", operatorOpts{leaderElect: true})
	took := s.waitConverged(ctx, load.parents, checkOptions{})
	report(t, result{"4. SIGTERM with slow reconciles in flight", load.String(), "every write +0.5–1.5 s", "",
		fmt.Sprintf("exit 0 %.1fs after SIGTERM (%d writes in the last second before it), lease released; %d statuses complete, %d untouched, 0 half-written; next process converged in %.0fs",
			exit.Seconds(), inflightWrites, complete, untouched, took.Seconds())})
}

// Scenario 6: one WebApp whose reconcile cannot succeed (its Service's
// name is held by an object someone else made, whose selector another
// field manager owns: the Applier refuses to take it over, a terminal
// verdict) does not hold up the others, is Stalled naming the holder and
// the field, and is not retried with backoff (only after the Stalled
// interval, or when it changes).
func TestIsolation(t *testing.T) {
	ctx := t.Context()
	s := newScenario(t)
	blocked := parentName(0)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: blocked},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app.kubernetes.io/instance": "someone-else"},
			Ports:    []corev1.ServicePort{{Name: "web", Port: 80}},
		},
	}
	if err := cluster.Client().Create(ctx, svc, client.FieldOwner("someone-else")); err != nil {
		t.Fatal(err)
	}
	op := s.startOperator("isolation", operatorOpts{})
	s.createParents(ctx, 0, load.parents)
	took := s.waitConverged(ctx, load.parents, checkOptions{except: []string{blocked}})

	app := &webappv1.WebApp{}
	if err := cluster.Client().Get(ctx, client.ObjectKey{Namespace: s.ns, Name: blocked}, app); err != nil {
		t.Fatal(err)
	}
	if status.IsTrue(app, status.Ready) || !status.IsTrue(app, status.Stalled) {
		t.Errorf("WebApp %s: want Stalled=True and Ready=False: %+v", blocked, app.Status.Conditions)
	}
	msg := readyMessage(app)
	if !strings.Contains(msg, `.spec.selector (owned by "someone-else")`) {
		t.Errorf("WebApp %s: Ready %q, want the conflicting field and its manager named", blocked, msg)
	}
	if err := cluster.Client().Get(ctx, client.ObjectKeyFromObject(svc), svc); err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Selector["app.kubernetes.io/instance"] != "someone-else" || metav1.GetControllerOf(svc) != nil {
		t.Errorf("Service %s taken over: selector %v, controller %v", svc.Name, svc.Spec.Selector, metav1.GetControllerOf(svc))
	}
	// A verdict, not retried with backoff: count its failed reconciles.
	retries := 0
	for line := range strings.Lines(tail(op.log, 100000)) {
		if strings.Contains(line, `"Reconciler error"`) && strings.Contains(line, `"name":"`+blocked+`"`) {
			retries++
		}
	}
	if retries != 1 {
		t.Errorf("WebApp %s: %d failed reconciles, want 1 (Stalled: no backoff retries)", blocked, retries)
	}
	report(t, result{"6. isolation: one WebApp cannot succeed", load.String(), "its Service's name held by someone else's object (refused takeover)", "",
		fmt.Sprintf("the other %d converged in %.0fs; the blocked one failed %d time(s), Stalled naming the holder, the field and its owner",
			load.parents-1, took.Seconds(), retries)})
}

// Scenario 7: while the operator works, another client (its own field
// manager) adds and removes its own labels, annotations and finalizers on
// the WebApps and their children, and sets a field of the Deployments; at
// the end all of its work that should be there is there, and what it
// removed stays removed.
func TestOthersWorkKept(t *testing.T) {
	ctx := t.Context()
	s := newScenario(t)
	s.startOperator("others", operatorOpts{})
	start := time.Now()
	s.createParents(ctx, 0, load.parents)

	var wg sync.WaitGroup
	errs := make(chan error, load.parents)
	sem := make(chan struct{}, 4)
	for i := range load.parents {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := foreignWork(ctx, s.ns, parentName(i)); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s.waitConverged(ctx, load.parents, checkOptions{extra: foreignKept})
	took := time.Since(start)
	report(t, result{"7. others' work kept", load.String(), "another manager adds/removes labels, annotations, finalizers, a Deployment field while the operator creates and then updates (spec change) every child", "",
		fmt.Sprintf("converged in %.0fs; every foreign label, annotation, finalizer and field present, removed ones absent", took.Seconds())})
}

const (
	foreignManager   = "someone-else"
	foreignFinalizer = "someone-else.example/hold"
)

// foreignWork applies, as another field manager, labels, an annotation and
// a finalizer to a WebApp and its children (and revisionHistoryLimit to
// the Deployment) once they exist, then applies again without one label
// and with a new annotation value. Between the two, the WebApp's spec
// changes, so that the operator applies every child again and writes its
// status.
func foreignWork(ctx context.Context, ns, name string) error {
	targets := []struct{ apiVersion, kind, name string }{
		{webappv1.GroupVersion.String(), "WebApp", name},
		{"v1", "ConfigMap", name + "-config"},
		{"v1", "Service", name},
		{"apps/v1", "Deployment", name},
	}
	for round, labels := range []map[string]any{
		{"someone-else/keep": "1", "someone-else/drop": "1"},
		{"someone-else/keep": "1"},
	} {
		time.Sleep(time.Duration(rand.IntN(500)) * time.Millisecond)
		if round == 1 {
			app := &webappv1.WebApp{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
			patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"config":{"GREETING":"changed"}}}`))
			if err := cluster.Client().Patch(ctx, app, patch, client.FieldOwner("spec-editor")); err != nil {
				return fmt.Errorf("WebApp %s/%s: change spec: %w", ns, name, err)
			}
		}
		for _, tg := range targets {
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": tg.apiVersion, "kind": tg.kind,
				"metadata": map[string]any{
					"namespace": ns, "name": tg.name, "labels": labels,
					"annotations": map[string]any{"someone-else/note": fmt.Sprintf("v%d", round+1)},
					"finalizers":  []any{foreignFinalizer},
				},
			}}
			if tg.kind == "Deployment" {
				u.Object["spec"] = map[string]any{"revisionHistoryLimit": int64(3)}
			}
			// The child may not exist yet: wait for it, without creating it.
			err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, load.converge, true, func(ctx context.Context) (bool, error) {
				probe := &unstructured.Unstructured{}
				probe.SetAPIVersion(tg.apiVersion)
				probe.SetKind(tg.kind)
				if err := cluster.Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: tg.name}, probe); err != nil {
					return false, nil
				}
				//nolint:staticcheck // client.Apply with an unstructured object is the simplest apply here
				err := cluster.Client().Patch(ctx, u.DeepCopy(), client.Apply, client.FieldOwner(foreignManager))
				return err == nil, nil
			})
			if err != nil {
				return fmt.Errorf("%s %s/%s: apply as %s: %w", tg.kind, ns, tg.name, foreignManager, err)
			}
		}
	}
	return nil
}

// foreignKept checks what foreignWork left on app and its children.
func foreignKept(ctx context.Context, app *webappv1.WebApp) []string {
	var p []string
	check := func(kind string, o client.Object) {
		if err := cluster.Client().Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: o.GetName()}, o); err != nil {
			p = append(p, fmt.Sprintf("%s %s: %v", kind, o.GetName(), err))
			return
		}
		l, a := o.GetLabels(), o.GetAnnotations()
		switch {
		case l["someone-else/keep"] != "1":
			p = append(p, kind+": foreign label lost")
		case l["someone-else/drop"] != "":
			p = append(p, kind+": removed foreign label back")
		case a["someone-else/note"] != "v2":
			p = append(p, fmt.Sprintf("%s: foreign annotation %q, want v2", kind, a["someone-else/note"]))
		case !slices.Contains(o.GetFinalizers(), foreignFinalizer):
			p = append(p, kind+": foreign finalizer lost")
		}
	}
	check("WebApp", app.DeepCopy())
	check("ConfigMap", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name + "-config"}})
	check("Service", &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: app.Name}})
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: app.Name}}
	check("Deployment", dep)
	if dep.Spec.RevisionHistoryLimit == nil || *dep.Spec.RevisionHistoryLimit != 3 {
		p = append(p, "Deployment: foreign field revisionHistoryLimit lost")
	}
	return p
}

// lastTransitions returns the latest lastTransitionTime of the scenario's
// Deployments' Available=True condition and of its WebApps' Ready=True
// condition (whole seconds, as the API server stores them).
func (s *scenario) lastTransitions(ctx context.Context) (deployment, ready time.Time) {
	var deps appsv1.DeploymentList
	if err := cluster.Client().List(ctx, &deps, client.InNamespace(s.ns)); err == nil {
		for _, d := range deps.Items {
			for _, c := range d.Status.Conditions {
				if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue && c.LastTransitionTime.After(deployment) {
					deployment = c.LastTransitionTime.Time
				}
			}
		}
	}
	var apps webappv1.WebAppList
	if err := cluster.Client().List(ctx, &apps, client.InNamespace(s.ns)); err == nil {
		for i := range apps.Items {
			if c := status.Get(&apps.Items[i], status.Ready); c != nil && c.Status == metav1.ConditionTrue && c.LastTransitionTime.After(ready) {
				ready = c.LastTransitionTime.Time
			}
		}
	}
	return deployment, ready
}

// healPods does, until the test ends, what a kubelet does and kwok does
// not: when the node lifecycle controller marked a pod Ready=False because
// its node's heartbeat lapsed during a long API server outage, the kubelet
// reports it Ready again at its next status sync; kwok leaves it NotReady
// for minutes, so the Deployment, and rightly its WebApp, would stay
// unavailable. It returns the count of pods it set Ready.
func (s *scenario) healPods(t *testing.T) *atomic.Int64 {
	t.Helper()
	var healed atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			var pods corev1.PodList
			if err := cluster.Client().List(ctx, &pods, client.InNamespace(s.ns)); err == nil {
				for i := range pods.Items {
					pod := &pods.Items[i]
					if podCondition(pod, corev1.PodReady) != corev1.ConditionFalse || podCondition(pod, corev1.ContainersReady) != corev1.ConditionTrue {
						continue
					}
					patch := client.RawPatch(types.StrategicMergePatchType,
						[]byte(`{"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"set again by the reliability test, as a kubelet would"}]}}`))
					if err := cluster.Client().Status().Patch(ctx, pod, patch); err == nil {
						healed.Add(1)
					}
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Second):
			}
		}
	}()
	return &healed
}

func podCondition(pod *corev1.Pod, t corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range pod.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}

// secretSentinel creates a Secret labelled for the first WebApp (its pods
// get it as environment variables) holding a value that must never appear
// in the operator's logs or in events, and returns that value.
func secretSentinel(t *testing.T, s *scenario) string {
	t.Helper()
	sentinel := "kopgo-sentinel-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: parentName(0) + "-creds",
			Labels: map[string]string{operator.SecretLabel: parentName(0)}},
		StringData: map[string]string{"PASSWORD": sentinel},
	}
	if err := cluster.Client().Create(t.Context(), secret); err != nil {
		t.Fatal(err)
	}
	return sentinel
}

// noSecretIn checks that sentinel is in neither the operator's log nor an
// event of the scenario's namespace.
func noSecretIn(t *testing.T, s *scenario, logPath, sentinel string) {
	t.Helper()
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), sentinel) {
		t.Error("a Secret's value is in the operator's log")
	}
	var events eventsv1.EventList
	if err := cluster.Client().List(t.Context(), &events, client.InNamespace(s.ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if strings.Contains(e.Note, sentinel) {
			t.Errorf("a Secret's value is in event %s: %s", e.Name, e.Note)
		}
	}
}
