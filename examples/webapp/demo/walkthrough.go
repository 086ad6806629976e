package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	webappv1 "github.com/kopgo/kopgo/examples/webapp/api/v1alpha1"
	"github.com/kopgo/kopgo/examples/webapp/operator"
	"github.com/kopgo/kopgo/status"
)

// StepTimeout bounds each wait of the walkthrough.
const StepTimeout = 2 * time.Minute

// Step is one timed part of the walkthrough.
type Step struct {
	// Name says what happened.
	Name string
	// Took is how long it took.
	Took time.Duration
}

// Summary is what Walkthrough did, step by step.
type Summary struct {
	// Steps in order.
	Steps []Step
}

// Print writes the summary as a table.
func (s *Summary) Print(w io.Writer) {
	var total time.Duration
	for _, st := range s.Steps {
		_, _ = fmt.Fprintf(w, "  %-52s %6.1fs\n", st.Name, st.Took.Seconds())
		total += st.Took
	}
	_, _ = fmt.Fprintf(w, "  %-52s %6.1fs\n", "total", total.Seconds())
}

// walk is one walkthrough's state: its client, output and timings.
type walk struct {
	c       client.Client
	out     io.Writer
	ns      string
	summary Summary
	start   time.Time
}

func (w *walk) say(format string, args ...any) { _, _ = fmt.Fprintf(w.out, format+"\n", args...) }

func (w *walk) step(name string) {
	w.say("\n==> %s", name)
	w.start = time.Now()
}

func (w *walk) done(name string) {
	took := time.Since(w.start)
	w.summary.Steps = append(w.summary.Steps, Step{Name: name, Took: took})
	w.say("    done in %.1fs", took.Seconds())
}

// until polls check every 100 ms until it reports done, printing each new
// progress line it returns. It fails after StepTimeout with what it waited
// for and the last progress.
func (w *walk) until(ctx context.Context, what string, check func(ctx context.Context) (done bool, progress string, err error)) error {
	ctx, cancel := context.WithTimeout(ctx, StepTimeout)
	defer cancel()
	last := ""
	for {
		ok, progress, err := check(ctx)
		if progress != "" && progress != last {
			w.say("    %s", progress)
			last = progress
		}
		if err == nil && ok {
			return nil
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return fmt.Errorf("%s: not reached within %s (last: %q): %w", what, StepTimeout, last, err)
			}
			return fmt.Errorf("%s: not reached within %s (last: %q)", what, StepTimeout, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Walkthrough shows the operator at work in namespace ns (created if
// missing), printing progress to out: it creates a WebApp, waits for its
// children and its rollout, scales it, shows how bad input is reported,
// lists the events, and deletes it, waiting for the finalizer's cleanup and
// the garbage collector's cascade. Each expectation is checked: an error
// says which one was not met. It needs an operator running and, for the
// rollout and the cascade, a full cluster (controller manager, scheduler,
// nodes).
func Walkthrough(ctx context.Context, c client.Client, ns string, out io.Writer) (*Summary, error) {
	w := &walk{c: c, out: out, ns: ns}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	for _, f := range []func(context.Context) error{w.create, w.scale, w.badInput, w.events, w.delete} {
		if err := f(ctx); err != nil {
			return &w.summary, err
		}
	}
	return &w.summary, nil
}

const appName = "web"

func (w *walk) create(ctx context.Context) error {
	w.step(fmt.Sprintf("Creating WebApp %s/%s: nginx:1.27, 2 replicas, a config and a labelled Secret", w.ns, appName))
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: appName + "-credentials", Namespace: w.ns, Labels: map[string]string{operator.SecretLabel: appName}},
		StringData: map[string]string{"API_TOKEN": "s3cr3t"},
	}
	app := &webappv1.WebApp{
		ObjectMeta: metav1.ObjectMeta{Name: appName, Namespace: w.ns},
		Spec:       webappv1.WebAppSpec{Image: "nginx:1.27", Replicas: new(int32(2)), Config: map[string]string{"GREETING": "hello"}},
	}
	for _, o := range []client.Object{secret, app} {
		if err := w.c.Create(ctx, o); err != nil {
			return err
		}
	}
	children := []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: appName + "-config"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: appName}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: appName}},
	}
	seen := map[int]bool{}
	err := w.until(ctx, "children created", func(ctx context.Context) (bool, string, error) {
		for i, ch := range children {
			if seen[i] {
				continue
			}
			if err := w.c.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: ch.GetName()}, ch); err != nil {
				return false, "", client.IgnoreNotFound(err)
			}
			if !metav1.IsControlledBy(ch, app) {
				return false, "", fmt.Errorf("%T %s is not controlled by the WebApp", ch, ch.GetName())
			}
			seen[i] = true
			w.say("    %-28s applied (controlled by WebApp %s)", kindOf(ch)+" "+ch.GetName(), appName)
		}
		return true, "", nil
	})
	if err != nil {
		return err
	}
	if err := w.waitReady(ctx, 2); err != nil {
		return err
	}
	var registry corev1.ConfigMap
	if err := w.c.Get(ctx, client.ObjectKey{Namespace: OperatorNamespace, Name: operator.RegistryName}, &registry); err != nil {
		return err
	}
	key := operator.RegistryKey(app)
	if registry.Data[key] == "" {
		return fmt.Errorf("registry ConfigMap has no entry %q: %v", key, registry.Data)
	}
	w.say("    registry %s/%s: %s = %s", OperatorNamespace, operator.RegistryName, key, registry.Data[key])
	w.done("create, roll out 2 pods, Ready")
	return nil
}

// waitReady waits for Ready=True at the current generation with n pods,
// printing the Ready condition as it changes.
func (w *walk) waitReady(ctx context.Context, n int32) error {
	return w.until(ctx, fmt.Sprintf("WebApp Ready with %d pods", n), func(ctx context.Context) (bool, string, error) {
		var app webappv1.WebApp
		if err := w.c.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: appName}, &app); err != nil {
			return false, "", err
		}
		ready := status.Get(&app, status.Ready)
		if ready == nil {
			return false, "", nil
		}
		progress := fmt.Sprintf("Ready=%-8s %s: %s", ready.Status, ready.Reason, ready.Message)
		if status.IsTrue(&app, status.Stalled) {
			return false, progress, errors.New("stalled")
		}
		return status.IsTrue(&app, status.Ready) && status.IsCurrent(&app) && app.Status.ReadyReplicas == n, progress, nil
	})
}

func (w *walk) scale(ctx context.Context) error {
	w.step("Scaling WebApp " + appName + " to 3 replicas")
	var app webappv1.WebApp
	if err := w.c.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: appName}, &app); err != nil {
		return err
	}
	patch := client.MergeFrom(app.DeepCopy())
	app.Spec.Replicas = new(int32(3))
	if err := w.c.Patch(ctx, &app, patch); err != nil {
		return err
	}
	if err := w.waitReady(ctx, 3); err != nil {
		return err
	}
	w.done("scale to 3 pods, Ready")
	return nil
}

func (w *walk) badInput(ctx context.Context) error {
	w.step(`Bad input: WebApp "broken" with image "nginx:::" and config key "1_BAD"`)
	bad := &webappv1.WebApp{
		ObjectMeta: metav1.ObjectMeta{Name: "broken", Namespace: w.ns},
		Spec:       webappv1.WebAppSpec{Image: "nginx:::", Config: map[string]string{"1_BAD": "x"}},
	}
	if err := w.c.Create(ctx, bad); err != nil {
		return err
	}
	err := w.until(ctx, "broken WebApp Stalled", func(ctx context.Context) (bool, string, error) {
		if err := w.c.Get(ctx, client.ObjectKeyFromObject(bad), bad); err != nil {
			return false, "", err
		}
		st := status.Get(bad, status.Stalled)
		if st == nil || !status.IsTrue(bad, status.Stalled) {
			return false, "", nil
		}
		return true, fmt.Sprintf("Stalled=True %s: %s", st.Reason, st.Message), nil
	})
	if err != nil {
		return err
	}
	msg := status.Get(bad, status.Stalled).Message
	for _, field := range []string{"spec.image", "spec.config[1_BAD]"} {
		if !strings.Contains(msg, field) {
			return fmt.Errorf("the Stalled message does not name %s: %q", field, msg)
		}
	}
	var dep appsv1.Deployment
	if err := w.c.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: bad.Name}, &dep); !apierrors.IsNotFound(err) {
		return fmt.Errorf("a Deployment was made for the broken WebApp, or reading it failed: %w", err)
	}
	w.say("    no children were made; the operator will not retry until the spec changes")
	if err := w.c.Delete(ctx, bad); err != nil {
		return err
	}
	if err := w.until(ctx, "broken WebApp deleted", func(ctx context.Context) (bool, string, error) {
		err := w.c.Get(ctx, client.ObjectKeyFromObject(bad), bad)
		return apierrors.IsNotFound(err), "", client.IgnoreNotFound(err)
	}); err != nil {
		return err
	}
	w.done("bad input reported as Stalled")
	return nil
}

func (w *walk) events(ctx context.Context) error {
	w.step("Events of WebApp " + appName)
	var list eventsv1.EventList
	err := w.until(ctx, "a RolledOut event", func(ctx context.Context) (bool, string, error) {
		if err := w.c.List(ctx, &list, client.InNamespace(w.ns)); err != nil {
			return false, "", err
		}
		return slices.ContainsFunc(list.Items, func(e eventsv1.Event) bool { return e.Regarding.Name == appName && e.Reason == "RolledOut" }), "", nil
	})
	if err != nil {
		return err
	}
	slices.SortStableFunc(list.Items, func(a, b eventsv1.Event) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	for _, e := range list.Items {
		if e.Regarding.Kind != "WebApp" || e.Regarding.Name != appName {
			continue
		}
		count := int32(1)
		if e.Series != nil {
			count = e.Series.Count
		}
		w.say("    %-7s %-18s x%d  %s", e.Type, e.Reason, count, e.Note)
	}
	w.done("events listed")
	return nil
}

func (w *walk) delete(ctx context.Context) error {
	w.step("Deleting WebApp " + appName)
	app := &webappv1.WebApp{ObjectMeta: metav1.ObjectMeta{Name: appName, Namespace: w.ns}}
	if err := w.c.Delete(ctx, app); err != nil {
		return err
	}
	key := operator.RegistryKey(app)
	err := w.until(ctx, "finalizer cleanup", func(ctx context.Context) (bool, string, error) {
		err := w.c.Get(ctx, client.ObjectKeyFromObject(app), app)
		if err == nil {
			return false, fmt.Sprintf("WebApp terminating, finalizers %v", app.Finalizers), nil
		}
		if !apierrors.IsNotFound(err) {
			return false, "", err
		}
		var registry corev1.ConfigMap
		if err := w.c.Get(ctx, client.ObjectKey{Namespace: OperatorNamespace, Name: operator.RegistryName}, &registry); err != nil {
			return false, "", err
		}
		if _, ok := registry.Data[key]; ok {
			return false, "", fmt.Errorf("WebApp gone but registry entry %s is still there", key)
		}
		return true, fmt.Sprintf("finalizer ran: registry entry %s removed, WebApp gone", key), nil
	})
	if err != nil {
		return err
	}
	sel := client.MatchingLabels{operator.InstanceLabel: appName}
	err = w.until(ctx, "cascade", func(ctx context.Context) (bool, string, error) {
		var left []string
		for _, l := range []client.ObjectList{&appsv1.DeploymentList{}, &appsv1.ReplicaSetList{}, &corev1.PodList{}, &corev1.ServiceList{}, &corev1.ConfigMapList{}} {
			if err := w.c.List(ctx, l, client.InNamespace(w.ns), sel); err != nil {
				return false, "", err
			}
			if n := apimeta.LenList(l); n > 0 {
				left = append(left, fmt.Sprintf("%d %s", n, strings.TrimSuffix(kindOf(l), "List")))
			}
		}
		if len(left) == 0 {
			return true, "garbage collector: Deployment, ReplicaSet, Pods, Service and ConfigMap deleted", nil
		}
		return false, "cascading, left: " + strings.Join(left, ", "), nil
	})
	if err != nil {
		return err
	}
	w.done("delete: finalizer cleanup and cascade")
	return nil
}

func kindOf(o any) string { return strings.TrimPrefix(fmt.Sprintf("%T", o), "*v1.") }
