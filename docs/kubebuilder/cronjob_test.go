// Package kubebuilder_test runs the two CronJob controllers of kopgo's
// kubebuilder migration guide (docs/kubebuilder.md), package before (the
// tutorial's) and package after (migrated to kopgo's helpers), through the
// same scenarios against a real API server, counts their requests, and
// checks that every Go block of the guide is code these packages compile.
package kubebuilder_test

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	kbatch "k8s.io/api/batch/v1" //nolint:importas // the tutorial's alias: batchv1 is the CronJob API
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kopgo/kopgo/docs/kubebuilder/after"
	batchv1 "github.com/kopgo/kopgo/docs/kubebuilder/api/v1"
	"github.com/kopgo/kopgo/docs/kubebuilder/before"
	"github.com/kopgo/kopgo/test/testkit"
)

var (
	cluster *testkit.Cluster
	scheme  = newScheme()
)

// A bare control plane, as envtest gives the tutorial's suite: no Job
// controller, so Jobs run only when a test says they did.
func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard()) // each manager logs to its test
	testkit.Main(m, testkit.Options{Scheme: scheme, CRDPaths: []string{"config/crd/bases"}},
		func(c *testkit.Cluster) { cluster = c })
}

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(batchv1.AddToScheme(s))
	return s
}

// implementation is one of the guide's two controllers, set up as
// main.go and the tutorial's suite_test.go do: with a Client and a Scheme.
type implementation struct {
	name  string
	setup func(ctrl.Manager) error
}

var implementations = []implementation{
	{"before", func(mgr ctrl.Manager) error {
		return (&before.CronJobReconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme()}).SetupWithManager(mgr)
	}},
	{"after", func(mgr ctrl.Manager) error {
		return (&after.CronJobReconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme()}).SetupWithManager(mgr)
	}},
}

// startManager runs impl in a manager for namespace ns, with cfg, until
// the test ends.
func startManager(t *testing.T, impl implementation, ns string, cfg *rest.Config) {
	t.Helper()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:     scheme,
		Logger:     testr.New(t),
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Cache:      cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Controller: config.Controller{SkipNameValidation: new(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := impl.setup(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
}

func newCronJob(ns, schedule string) *batchv1.CronJob {
	return &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "test-cronjob"},
		Spec: batchv1.CronJobSpec{
			Schedule: schedule,
			JobTemplate: kbatch.JobTemplateSpec{Spec: kbatch.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers:    []corev1.Container{{Name: "test-container", Image: "test-image"}},
				RestartPolicy: corev1.RestartPolicyOnFailure,
			}}}},
		},
	}
}

// The scenario of the tutorial's own controller test, run unchanged
// against both controllers: conditions appear, no Job runs before its
// time, a running Job shows in status.active with Available=True
// (JobsActive), and finished Jobs beyond the history limits are deleted,
// oldest first.
func TestTutorialScenario(t *testing.T) {
	for _, impl := range implementations {
		t.Run(impl.name, func(t *testing.T) {
			t.Parallel()
			ns := cluster.Namespace(t)
			startManager(t, impl, ns, cluster.Config)
			c := cluster.Client()
			ctx := t.Context()

			cronJob := newCronJob(ns, "0 0 1 1 *") // no run during the test
			if err := c.Create(ctx, cronJob); err != nil {
				t.Fatal(err)
			}
			key := client.ObjectKeyFromObject(cronJob)
			eventually(t, "status conditions initialized", func() error {
				if err := c.Get(ctx, key, cronJob); err != nil {
					return err
				}
				if len(cronJob.Status.Conditions) == 0 {
					return fmt.Errorf("no conditions")
				}
				return nil
			})
			for range 10 {
				if err := c.Get(ctx, key, cronJob); err != nil {
					t.Fatal(err)
				}
				if len(cronJob.Status.Active) != 0 {
					t.Fatalf("active Jobs %v before any ran", cronJob.Status.Active)
				}
				time.Sleep(200 * time.Millisecond)
			}

			ref := metav1.NewControllerRef(cronJob, batchv1.GroupVersion.WithKind(reflect.TypeFor[batchv1.CronJob]().Name()))
			testJob := jobOwnedBy(ns, "test-job", ref)
			if err := c.Create(ctx, testJob); err != nil {
				t.Fatal(err)
			}
			testJob.Status.Active = 2
			if err := c.Status().Update(ctx, testJob); err != nil {
				t.Fatal(err)
			}
			eventually(t, "one active Job in status", func() error {
				if err := c.Get(ctx, key, cronJob); err != nil {
					return err
				}
				if len(cronJob.Status.Active) != 1 || cronJob.Status.Active[0].Name != "test-job" {
					return fmt.Errorf("active %v, want test-job", cronJob.Status.Active)
				}
				available := apimeta.FindStatusCondition(cronJob.Status.Conditions, "Available")
				if available == nil || available.Status != metav1.ConditionTrue || available.Reason != "JobsActive" {
					return fmt.Errorf("Available %+v, want True with reason JobsActive", available)
				}
				return nil
			})

			limit := int32(1)
			eventually(t, "history limits set", func() error {
				if err := c.Get(ctx, key, cronJob); err != nil {
					return err
				}
				cronJob.Spec.FailedJobsHistoryLimit, cronJob.Spec.SuccessfulJobsHistoryLimit = &limit, &limit
				return c.Update(ctx, cronJob)
			})
			now := time.Now()
			oldFailed := finishedJob(t, c, ns, "failed-old", ref, kbatch.JobFailed, now.Add(-time.Minute))
			newFailed := finishedJob(t, c, ns, "failed-new", ref, kbatch.JobFailed, now.Add(time.Second))
			oldDone := finishedJob(t, c, ns, "done-old", ref, kbatch.JobComplete, now.Add(-time.Minute))
			newDone := finishedJob(t, c, ns, "done-new", ref, kbatch.JobComplete, now.Add(time.Second))
			eventually(t, "old finished Jobs deleted, new ones kept", func() error {
				for _, j := range []*kbatch.Job{oldFailed, oldDone} {
					if err := c.Get(ctx, client.ObjectKeyFromObject(j), &kbatch.Job{}); !apierrors.IsNotFound(err) {
						return fmt.Errorf("Job %s not deleted (%w)", j.Name, err)
					}
				}
				for _, j := range []*kbatch.Job{newFailed, newDone} {
					if err := c.Get(ctx, client.ObjectKeyFromObject(j), &kbatch.Job{}); err != nil {
						return fmt.Errorf("Job %s: %w", j.Name, err)
					}
				}
				return nil
			})
		})
	}
}

func jobOwnedBy(ns, name string, ref *metav1.OwnerReference) *kbatch.Job {
	return &kbatch.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: []metav1.OwnerReference{*ref}},
		Spec: kbatch.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers:    []corev1.Container{{Name: "test-container", Image: "test-image"}},
			RestartPolicy: corev1.RestartPolicyOnFailure,
		}}},
	}
}

// finishedJob creates a Job owned through ref that finished with outcome
// (Complete or Failed) and started at start.
func finishedJob(t *testing.T, c client.Client, ns, name string, ref *metav1.OwnerReference, outcome kbatch.JobConditionType, start time.Time) *kbatch.Job {
	t.Helper()
	job := jobOwnedBy(ns, name, ref)
	if err := c.Create(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	finish(t, c, job, outcome, start)
	return job
}

// finish writes the status of a Job that ran from start and ended with
// outcome, as the Job controller would.
func finish(t *testing.T, c client.Client, job *kbatch.Job, outcome kbatch.JobConditionType, start time.Time) {
	t.Helper()
	started := metav1.NewTime(start)
	job.Status.StartTime = &started
	job.Status.Active = 0
	switch outcome {
	case kbatch.JobFailed:
		job.Status.Conditions = []kbatch.JobCondition{
			{Type: kbatch.JobFailureTarget, Status: corev1.ConditionTrue},
			{Type: kbatch.JobFailed, Status: corev1.ConditionTrue},
		}
	case kbatch.JobComplete:
		job.Status.CompletionTime = &started
		job.Status.Conditions = []kbatch.JobCondition{
			{Type: kbatch.JobSuccessCriteriaMet, Status: corev1.ConditionTrue},
			{Type: kbatch.JobComplete, Status: corev1.ConditionTrue},
		}
	}
	if err := c.Status().Update(t.Context(), job); err != nil {
		t.Fatal(err)
	}
}

// eventually retries check for up to 30 seconds and fails the test with
// its last error.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// requests counts a manager's requests about one namespace by method and
// response code ("PUT 200", "POST 409"), and when the last one was sent.
type requests struct {
	ns   string
	mu   sync.Mutex
	n    map[string]int
	last time.Time
}

func (r *requests) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if strings.Contains(req.URL.Path, "/namespaces/"+r.ns+"/") && req.URL.Query().Get("watch") != "true" {
			code := "error"
			if err == nil {
				code = fmt.Sprint(resp.StatusCode)
			}
			r.mu.Lock()
			r.n[req.Method+" "+code]++
			r.last = time.Now()
			r.mu.Unlock()
		}
		return resp, err
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// take returns the counts since the last take and resets them.
func (r *requests) take() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.n
	r.n = map[string]int{}
	return n
}

// quiet waits until no request was sent for d since from, for at most max.
func (r *requests) quiet(t *testing.T, from time.Time, d, max time.Duration) {
	t.Helper()
	deadline := time.Now().Add(max)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		idle := time.Since(r.last)
		if r.last.Before(from) {
			idle = time.Since(from)
		}
		r.mu.Unlock()
		if idle >= d {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("requests went on for %s", max)
}

// phase is one measured part of a CronJob's life.
type phase struct {
	impl, name string
	counts     map[string]int
}

// TestRequests measures what the two controllers send about a CronJob
// with a run every 15 s and history limits of 1, in three phases:
// creating it (until it is quiet, before its first run), its first run
// (the Job created, the status updated), and its second run around a Job
// that finishes (Job 1 completes, Job 2 is created and completes, Job 1 is
// deleted). It logs the table the guide quotes (go test -v -run
// TestRequests ./docs/kubebuilder) and checks the guide's claims: after
// the migration no status PUT and no 409 are sent, and every phase sends
// fewer writes than before.
func TestRequests(t *testing.T) {
	var mu sync.Mutex
	var phases []phase
	t.Run("controllers", func(t *testing.T) {
		for _, impl := range implementations {
			t.Run(impl.name, func(t *testing.T) {
				t.Parallel()
				got := measure(t, impl)
				mu.Lock()
				phases = append(phases, got...)
				mu.Unlock()
			})
		}
	})
	if t.Failed() {
		return
	}
	slices.SortStableFunc(phases, func(a, b phase) int { return strings.Compare(b.impl, a.impl) }) // before first
	t.Logf("%-8s %-36s %5s %5s %6s %6s %4s %5s", "", "phase", "PUT", "POST", "PATCH", "DELETE", "409", "total")
	writes := map[string]map[string]int{}
	for _, p := range phases {
		var put, post, patch, del, conflicts, total int
		for k, n := range p.counts {
			method, code, _ := strings.Cut(k, " ")
			switch method {
			case http.MethodPut:
				put += n
			case http.MethodPost:
				post += n
			case http.MethodPatch:
				patch += n
			case http.MethodDelete:
				del += n
			}
			if code == "409" {
				conflicts += n
			}
			total += n
		}
		t.Logf("%-8s %-36s %5d %5d %6d %6d %4d %5d   %v", p.impl, p.name, put, post, patch, del, conflicts, total, p.counts)
		if writes[p.name] == nil {
			writes[p.name] = map[string]int{}
		}
		writes[p.name][p.impl] = put + post + patch + del
		if p.impl == "after" && (put > 0 || conflicts > 0) {
			t.Errorf("after, %s: %d PUTs and %d conflicts, want none", p.name, put, conflicts)
		}
	}
	for name, w := range writes {
		if w["after"] >= w["before"] {
			t.Errorf("%s: %d writes after the migration, %d before: want fewer", name, w["after"], w["before"])
		}
	}
}

// measure runs one controller through the phases and returns their counts.
func measure(t *testing.T, impl implementation) []phase {
	t.Helper()
	ns := cluster.Namespace(t)
	cfg, _ := cluster.CountedConfig()
	counted := &requests{ns: ns, n: map[string]int{}}
	cfg.Wrap(counted.wrap)
	startManager(t, impl, ns, cfg)
	c := cluster.Client()
	ctx := t.Context()
	time.Sleep(time.Second) // caches synced
	counted.take()

	var out []phase
	record := func(name string) { out = append(out, phase{impl: impl.name, name: name, counts: counted.take()}) }

	cronJob := newCronJob(ns, "@every 15s")
	limit := int32(1)
	cronJob.Spec.SuccessfulJobsHistoryLimit, cronJob.Spec.FailedJobsHistoryLimit = &limit, &limit
	created := time.Now()
	if err := c.Create(ctx, cronJob); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the controller's first status", func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(cronJob), cronJob); err != nil {
			return err
		}
		if len(cronJob.Status.Conditions) == 0 {
			return fmt.Errorf("no conditions")
		}
		return nil
	})
	counted.quiet(t, created, 2*time.Second, 12*time.Second)
	record("creating a CronJob")

	job1 := waitForJobs(t, ns, 1)[0]
	counted.quiet(t, time.Now(), 2*time.Second, 12*time.Second)
	record("its first run (Job 1 created)")

	finish(t, c, job1, kbatch.JobComplete, time.Now())
	jobs := waitForJobs(t, ns, 2)
	job2 := jobs[slices.IndexFunc(jobs, func(j *kbatch.Job) bool { return j.Name != job1.Name })]
	finish(t, c, job2, kbatch.JobComplete, time.Now().Add(time.Second))
	eventually(t, "Job 1 deleted by the history limit", func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(job1), &kbatch.Job{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("Job %s still there (%w)", job1.Name, err)
		}
		return nil
	})
	counted.quiet(t, time.Now(), 2*time.Second, 12*time.Second)
	record("second run, Jobs finish, Job 1 pruned")
	return out
}

// waitForJobs waits until ns holds n Jobs and returns them.
func waitForJobs(t *testing.T, ns string, n int) []*kbatch.Job {
	t.Helper()
	var out []*kbatch.Job
	deadline := time.Now().Add(40 * time.Second)
	for time.Now().Before(deadline) {
		var jobs kbatch.JobList
		if err := cluster.Client().List(t.Context(), &jobs, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		if len(jobs.Items) >= n {
			for i := range jobs.Items {
				out = append(out, &jobs.Items[i])
			}
			return out
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%d Jobs did not appear", n)
	return nil
}
