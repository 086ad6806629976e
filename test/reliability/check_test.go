package reliability_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	webappv1 "github.com/kopgo/kopgo/examples/webapp/api/v1alpha1"
	"github.com/kopgo/kopgo/examples/webapp/operator"
	"github.com/kopgo/kopgo/status"
)

// finalizer is the operator's finalizer ("kopgo.dev/<controller>").
const finalizer = "kopgo.dev/webapp"

// parentName is the name of the i-th WebApp of a scenario.
func parentName(i int) string { return fmt.Sprintf("app-%03d", i) }

// createParents creates WebApps from..to-1 with the scenario's label.
func (s *scenario) createParents(ctx context.Context, from, to int) {
	s.t.Helper()
	for i := from; i < to; i++ {
		app := &webappv1.WebApp{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: parentName(i), Labels: map[string]string{runLabel: s.ns}},
			Spec:       webappv1.WebAppSpec{Image: "registry.example/web:1.0", Config: map[string]string{"GREETING": "hello"}},
		}
		if err := cluster.Client().Create(ctx, app); err != nil {
			s.t.Fatalf("create WebApp %s: %v", app.Name, err)
		}
	}
}

// checkOptions adjust checkState.
type checkOptions struct {
	// except are WebApps not expected to converge (checked by the test).
	except []string
	// extra checks each WebApp and returns its problems.
	extra func(ctx context.Context, app *webappv1.WebApp) []string
}

// problems checks the scenario's final state object by object and returns
// what is wrong (nil when all is well): every WebApp Ready=True with
// observedGeneration == generation, the operator's finalizer, its registry
// entry, and exactly its three children (ConfigMap <name>-config, Service
// and Deployment <name>) controlled by it; no child of the operator's
// (labelled managed-by kopgo-webapp) that is orphaned or duplicated.
func (s *scenario) problems(ctx context.Context, want int, o checkOptions) []string {
	c := cluster.Client()
	var apps webappv1.WebAppList
	if err := c.List(ctx, &apps, client.InNamespace(s.ns)); err != nil {
		return []string{"list WebApps: " + err.Error()}
	}
	var registry corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: operator.RegistryName}, &registry); err != nil {
		return []string{"get registry: " + err.Error()}
	}
	var deps appsv1.DeploymentList
	var svcs corev1.ServiceList
	var cms corev1.ConfigMapList
	for _, l := range []client.ObjectList{&deps, &svcs, &cms} {
		if err := c.List(ctx, l, client.InNamespace(s.ns)); err != nil {
			return []string{"list children: " + err.Error()}
		}
	}
	// The operator's children by kind and name; each with its controller.
	children := map[string]types.UID{} // "Kind/name" -> controller UID
	var out []string
	addChild := func(kind string, obj metav1.Object) {
		if obj.GetLabels()["app.kubernetes.io/managed-by"] != "kopgo-webapp" {
			return
		}
		ref := metav1.GetControllerOf(obj)
		if ref == nil {
			out = append(out, fmt.Sprintf("%s %s: no controller (orphan)", kind, obj.GetName()))
			return
		}
		children[kind+"/"+obj.GetName()] = ref.UID
	}
	for i := range deps.Items {
		addChild("Deployment", &deps.Items[i])
	}
	for i := range svcs.Items {
		addChild("Service", &svcs.Items[i])
	}
	for i := range cms.Items {
		addChild("ConfigMap", &cms.Items[i])
	}

	if len(apps.Items) != want {
		out = append(out, fmt.Sprintf("%d WebApps, want %d", len(apps.Items), want))
	}
	owned := map[string]bool{}
	for i := range apps.Items {
		app := &apps.Items[i]
		mine := []string{"ConfigMap/" + app.Name + "-config", "Service/" + app.Name, "Deployment/" + app.Name}
		for _, k := range mine {
			owned[k] = true
		}
		if slices.Contains(o.except, app.Name) {
			continue
		}
		var p []string
		if !status.IsTrue(app, status.Ready) {
			p = append(p, "not Ready: "+readyMessage(app))
		}
		if app.Status.ObservedGeneration != app.Generation {
			p = append(p, fmt.Sprintf("observedGeneration %d, generation %d", app.Status.ObservedGeneration, app.Generation))
		}
		if !slices.Contains(app.Finalizers, finalizer) {
			p = append(p, "no finalizer "+finalizer)
		}
		if _, ok := registry.Data[operator.RegistryKey(app)]; !ok {
			p = append(p, "no registry entry")
		}
		for _, k := range mine {
			uid, ok := children[k]
			switch {
			case !ok:
				p = append(p, k+" missing")
			case uid != app.UID:
				p = append(p, k+" controlled by another object")
			}
		}
		if o.extra != nil {
			p = append(p, o.extra(ctx, app)...)
		}
		if len(p) > 0 {
			out = append(out, fmt.Sprintf("WebApp %s: %s", app.Name, strings.Join(p, "; ")))
		}
	}
	for k := range children {
		if !owned[k] {
			out = append(out, k+": a child of no WebApp (orphan or duplicate)")
		}
	}
	slices.Sort(out)
	return out
}

// waitConverged polls until the scenario's state has no problems, and
// returns how long it took; the test fails (listing at most 20 problems)
// after the variant's bound.
func (s *scenario) waitConverged(ctx context.Context, want int, o checkOptions) time.Duration {
	s.t.Helper()
	start := time.Now()
	var last []string
	err := wait.PollUntilContextTimeout(ctx, time.Second, load.converge, true, func(ctx context.Context) (bool, error) {
		last = s.problems(ctx, want, o)
		return len(last) == 0, nil
	})
	if err != nil {
		if len(last) > 20 {
			last = append(last[:20], fmt.Sprintf("... and %d more", len(last)-20))
		}
		s.t.Fatalf("not converged after %s: %v\n  %s", time.Since(start).Round(time.Second), err, strings.Join(last, "\n  "))
	}
	return time.Since(start)
}

func readyMessage(app *webappv1.WebApp) string {
	for _, c := range app.Status.Conditions {
		if c.Type == string(status.Ready) {
			return fmt.Sprintf("%s %s: %s", c.Status, c.Reason, c.Message)
		}
	}
	return "no Ready condition"
}

// releaseFinalizers removes every finalizer from the scenario's WebApps and
// their children, so that the namespace can go once the operators are
// stopped.
func (s *scenario) releaseFinalizers() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := cluster.Client()
	var lists = []client.ObjectList{&webappv1.WebAppList{}, &appsv1.DeploymentList{}, &corev1.ServiceList{}, &corev1.ConfigMapList{}}
	for _, l := range lists {
		if err := c.List(ctx, l, client.InNamespace(s.ns)); err != nil {
			s.t.Logf("cleanup: list: %v", err)
			continue
		}
		var objs []client.Object
		switch l := l.(type) {
		case *webappv1.WebAppList:
			for i := range l.Items {
				objs = append(objs, &l.Items[i])
			}
		case *appsv1.DeploymentList:
			for i := range l.Items {
				objs = append(objs, &l.Items[i])
			}
		case *corev1.ServiceList:
			for i := range l.Items {
				objs = append(objs, &l.Items[i])
			}
		case *corev1.ConfigMapList:
			for i := range l.Items {
				objs = append(objs, &l.Items[i])
			}
		}
		for _, o := range objs {
			if len(o.GetFinalizers()) == 0 {
				continue
			}
			patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))
			if err := c.Patch(ctx, o, patch); client.IgnoreNotFound(err) != nil {
				s.t.Logf("cleanup: remove finalizers of %s: %v", o.GetName(), err)
			}
		}
	}
}
