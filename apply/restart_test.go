package apply_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	autoscalingv1ac "k8s.io/client-go/applyconfigurations/autoscaling/v1"
	autoscalingv2ac "k8s.io/client-go/applyconfigurations/autoscaling/v2"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	controllerruntimecluster "sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kopgo/kopgo/apply"
	"github.com/kopgo/kopgo/test/testkit"
	"github.com/kopgo/kopgo/test/widget"
)

// operator is an operator just started: a controller-runtime manager whose
// cache runs transform, and a new Applier on it, remembering nothing, whose
// requests are counted.
type operator struct {
	applier *apply.Applier
	traffic *testkit.Traffic
	cache   cache.Cache
	stop    func()
}

func startOperator(t *testing.T, ns string, transform toolscache.TransformFunc) *operator {
	t.Helper()
	mgr, err := manager.New(cluster.Config, manager.Options{
		Scheme:  cluster.Scheme(),
		Metrics: metricsserver.Options{BindAddress: "0"},
		Cache:   cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}, DefaultTransform: transform},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	stop := sync.OnceFunc(func() { cancel(); <-done })
	t.Cleanup(stop)
	if !mgr.GetCache().WaitForCacheSync(t.Context()) {
		t.Fatal("cache did not sync")
	}
	cfg, traffic := cluster.CountedConfig()
	// Not the manager's HTTP client: the Applier's own requests go through
	// cfg, where they are counted.
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, err := apply.New(cfg, owner, apply.WithCluster(countedCluster{Cluster: mgr, hc: hc}))
	if err != nil {
		t.Fatal(err)
	}
	return &operator{applier: a, traffic: traffic, cache: mgr.GetCache(), stop: stop}
}

// countedCluster is a manager whose HTTP client counts its requests.
type countedCluster struct {
	controllerruntimecluster.Cluster
	hc *http.Client
}

func (c countedCluster) GetHTTPClient() *http.Client { return c.hc }

// applyCounted applies intent and returns the result and the requests the
// Applier sent, checked against the count it reports.
func (o *operator) applyCounted(t *testing.T, intent any, opts ...client.ApplyOption) (apply.Result, int64) {
	t.Helper()
	before := o.traffic.Requests.Load()
	res, err := o.applier.Apply(t.Context(), intent, opts...)
	if err != nil {
		t.Fatalf("apply %s: %v", nameOf(intent), err)
	}
	sent := o.traffic.Requests.Load() - before
	if int64(res.Requests) != sent {
		t.Errorf("apply %s: %d requests sent, %d reported", nameOf(intent), sent, res.Requests)
	}
	return res, sent
}

func nameOf(intent any) string {
	switch v := intent.(type) {
	case interface{ GetName() *string }:
		return ptr.Deref(v.GetName(), "")
	case client.Object:
		return v.GetName()
	}
	return "?"
}

// children are the intents of an operator's children: ConfigMaps (an apply
// configuration and an unstructured one), Deployments with containers
// keyed by name and ports keyed by containerPort and protocol (an apply
// configuration, protocols left to their default, and a typed object), and
// a Service with ports keyed by port and protocol.
func children(ns string) []any {
	labels := map[string]string{"app.kubernetes.io/name": "web"}
	web := appsv1ac.Deployment("web", ns).WithLabels(labels).WithSpec(appsv1ac.DeploymentSpec().
		WithReplicas(2).
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(labels)).
		WithTemplate(corev1ac.PodTemplateSpec().WithLabels(labels).WithSpec(corev1ac.PodSpec().WithContainers(
			corev1ac.Container().WithName("web").WithImage("nginx:1.27").
				WithPorts(corev1ac.ContainerPort().WithName("http").WithContainerPort(8080)).
				WithEnv(corev1ac.EnvVar().WithName("MODE").WithValue("prod")).
				WithResources(corev1ac.ResourceRequirements().WithLimits(corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("128Mi"),
				})),
			corev1ac.Container().WithName("dns").WithImage("coredns:1.12").
				WithPorts(corev1ac.ContainerPort().WithContainerPort(53).WithProtocol(corev1.ProtocolUDP),
					corev1ac.ContainerPort().WithContainerPort(53).WithProtocol(corev1.ProtocolTCP)),
		))))
	worker := typedDeployment(ns, "worker")
	worker.Spec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9090}}
	svc := corev1ac.Service("web", ns).WithSpec(corev1ac.ServiceSpec().WithSelector(labels).WithPorts(
		corev1ac.ServicePort().WithName("http").WithPort(80).WithTargetPort(intstr.FromString("http")),
		corev1ac.ServicePort().WithName("dns").WithPort(53).WithProtocol(corev1.ProtocolUDP).WithTargetPort(intstr.FromInt32(53)),
	))
	return []any{
		configMapAC(ns, "settings", map[string]string{"color": "blue", "size": "3"}).WithLabels(labels),
		configMapU(ns, "plain", map[string]any{"k": "v"}),
		web,
		worker,
		svc,
	}
}

// A restarted operator remembers nothing, yet applying its children's
// unchanged intents sends no request: the cache's copies, which keep our
// managedFields entry (KeepManagedFields), prove them unchanged.
func TestRestartSendsNothing(t *testing.T) {
	ns := cluster.Namespace(t)
	first := startOperator(t, ns, apply.KeepManagedFields(owner))
	for _, child := range children(ns) {
		if res, _ := first.applyCounted(t, child); res.Outcome != apply.Created {
			t.Errorf("first apply of %s = %s, want Created", nameOf(child), res.Outcome)
		}
	}
	first.stop()

	second := startOperator(t, ns, apply.KeepManagedFields(owner))
	for _, child := range children(ns) {
		res, sent := second.applyCounted(t, child)
		if res.Outcome != apply.Unchanged || sent != 0 {
			t.Errorf("apply of %s after the restart = %s with %d requests, want Unchanged with 0", nameOf(child), res.Outcome, sent)
		}
		obj := res.Object()
		if obj == nil || obj.GetName() != nameOf(child) || obj.GetKind() == "" {
			t.Fatalf("result object of %s = %v", nameOf(child), obj)
		}
		var managers []string
		for _, e := range obj.GetManagedFields() {
			managers = append(managers, e.Manager)
		}
		if diff := cmp.Diff([]string{owner}, managers); diff != "" {
			t.Errorf("managers of the cached %s (-want +got):\n%s", nameOf(child), diff)
		}
	}
}

// After a restart, an apply that would change something is sent, and one
// the cache cannot prove unchanged is sent too; the untouched sibling still
// costs nothing (except where the cache keeps no managedFields at all). The
// operator takes its fields back from other managers (Force), as a
// controller does with its children.
func TestRestartSendsWhatChanged(t *testing.T) {
	const other = "someone-else"
	data := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	// The same fields at both versions: our labels and minReplicas (the
	// scale target, atomic at v1 and granular at v2, is someone else's).
	hpaV2 := func(ns string) any {
		return autoscalingv2ac.HorizontalPodAutoscaler("target", ns).WithLabels(map[string]string{"team": "web"}).
			WithSpec(autoscalingv2ac.HorizontalPodAutoscalerSpec().WithMinReplicas(2))
	}
	hpaV1 := func(ns string) any {
		return autoscalingv1ac.HorizontalPodAutoscaler("target", ns).WithLabels(map[string]string{"team": "web"}).
			WithSpec(autoscalingv1ac.HorizontalPodAutoscalerSpec().WithMinReplicas(2))
	}
	tests := []struct {
		name      string
		setup     func(t *testing.T, ns string)   // what others create before our first apply
		before    func(ns string) any             // the intent applied before the restart
		meanwhile func(t *testing.T, ns string)   // what others do before the restart
		transform func() toolscache.TransformFunc // the restarted cache's
		after     func(ns string) any             // the intent applied after it
		want      apply.Outcome                   // of that apply, with one request
		check     func(t *testing.T, ns string)   // the object on the server
		sibling   int64                           // requests for an untouched sibling
	}{
		{
			name:   "the intent drops a field it set",
			before: func(ns string) any { return configMapAC(ns, "target", data("a", "1", "b", "2")) },
			after:  func(ns string) any { return configMapAC(ns, "target", data("a", "1")) },
			want:   apply.Updated,
			check:  wantData(data("a", "1")),
		},
		{
			name:   "the intent reorders its containers",
			before: func(ns string) any { return twoContainers(ns, "a", "b") },
			after:  func(ns string) any { return twoContainers(ns, "b", "a") },
			want:   apply.Updated,
			check: func(t *testing.T, ns string) {
				t.Helper()
				d := &appsv1.Deployment{}
				if err := cluster.Client().Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "target"}, d); err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, c := range d.Spec.Template.Spec.Containers {
					names = append(names, c.Name)
				}
				if diff := cmp.Diff([]string{"b", "a"}, names); diff != "" {
					t.Errorf("containers on the server (-want +got):\n%s", diff)
				}
			},
		},
		{
			name:   "another manager took a field over with force",
			before: func(ns string) any { return configMapAC(ns, "target", data("a", "1")) },
			meanwhile: func(t *testing.T, ns string) {
				t.Helper()
				if err := cluster.Client().Apply(t.Context(), configMapAC(ns, "target", data("a", "theirs")), client.FieldOwner(other), client.ForceOwnership); err != nil {
					t.Fatal(err)
				}
			},
			after: func(ns string) any { return configMapAC(ns, "target", data("a", "1")) },
			want:  apply.Updated,
			check: wantData(data("a", "1")),
		},
		{
			name:   "another manager shared a field, then changed it",
			before: func(ns string) any { return configMapAC(ns, "target", data("a", "1")) },
			meanwhile: func(t *testing.T, ns string) {
				t.Helper()
				if err := cluster.Client().Apply(t.Context(), configMapAC(ns, "target", data("a", "1")), client.FieldOwner(other)); err != nil {
					t.Fatal(err)
				}
				cm := &corev1.ConfigMap{}
				if err := cluster.Client().Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "target"}, cm); err != nil {
					t.Fatal(err)
				}
				cm.Data["a"] = "theirs"
				if err := cluster.Client().Update(t.Context(), cm, client.FieldOwner(other+"-editor")); err != nil {
					t.Fatal(err)
				}
			},
			after: func(ns string) any { return configMapAC(ns, "target", data("a", "1")) },
			want:  apply.Updated,
			check: wantData(data("a", "1")),
		},
		{
			name:      "the cache strips managedFields",
			before:    func(ns string) any { return configMapAC(ns, "target", data("a", "1")) },
			transform: cache.TransformStripManagedFields,
			after:     func(ns string) any { return configMapAC(ns, "target", data("a", "1")) },
			want:      apply.Unchanged,
			check:     wantData(data("a", "1")),
			sibling:   1,
		},
		{
			// No schema for a custom resource here: the Applier cannot tell
			// how the server merges its lists and maps, so it asks.
			name:   "a custom resource",
			before: func(ns string) any { return widgetIntent(ns) },
			after:  func(ns string) any { return widgetIntent(ns) },
			want:   apply.Unchanged,
			check:  func(*testing.T, string) {},
		},
		{
			name: "our entry is at another apiVersion",
			setup: func(t *testing.T, ns string) {
				t.Helper()
				hpa := autoscalingv2ac.HorizontalPodAutoscaler("target", ns).WithSpec(autoscalingv2ac.HorizontalPodAutoscalerSpec().
					WithScaleTargetRef(autoscalingv2ac.CrossVersionObjectReference().WithAPIVersion("apps/v1").WithKind("Deployment").WithName("web")).
					WithMaxReplicas(3))
				if err := cluster.Client().Apply(t.Context(), hpa, client.FieldOwner(other)); err != nil {
					t.Fatal(err)
				}
			},
			before: hpaV2,
			after:  hpaV1,
			want:   apply.Updated,
			check: func(t *testing.T, ns string) {
				t.Helper()
				hpa := &autoscalingv1.HorizontalPodAutoscaler{}
				if err := cluster.Client().Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "target"}, hpa); err != nil {
					t.Fatal(err)
				}
				for _, e := range hpa.ManagedFields {
					if e.Manager == owner && e.APIVersion != "autoscaling/v1" {
						t.Errorf("our entry is at %s, want autoscaling/v1", e.APIVersion)
					}
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := cluster.Namespace(t)
			sibling := configMapAC(ns, "sibling", data("k", "v"))
			if tt.setup != nil {
				tt.setup(t, ns)
			}
			first := startOperator(t, ns, apply.KeepManagedFields(owner))
			first.applyCounted(t, tt.before(ns))
			if res, _ := first.applyCounted(t, sibling); res.Outcome != apply.Created {
				t.Fatalf("first apply of the sibling = %s, want Created", res.Outcome)
			}
			first.stop()
			if tt.meanwhile != nil {
				tt.meanwhile(t, ns)
			}

			transform := apply.KeepManagedFields(owner)
			if tt.transform != nil {
				transform = tt.transform()
			}
			second := startOperator(t, ns, transform)
			if res, sent := second.applyCounted(t, tt.after(ns), apply.Force(true)); res.Outcome != tt.want || sent != 1 {
				t.Errorf("apply after the restart = %s with %d requests, want %s with 1", res.Outcome, sent, tt.want)
			}
			tt.check(t, ns)
			if res, sent := second.applyCounted(t, sibling, apply.Force(true)); res.Outcome != apply.Unchanged || sent != tt.sibling {
				t.Errorf("apply of the untouched sibling = %s with %d requests, want Unchanged with %d", res.Outcome, sent, tt.sibling)
			}
		})
	}
}

// twoContainers is a Deployment "target" whose containers have the names
// given, in that order.
func twoContainers(ns, first, second string) any {
	labels := map[string]string{"app": "target"}
	return appsv1ac.Deployment("target", ns).WithSpec(appsv1ac.DeploymentSpec().
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(labels)).
		WithTemplate(corev1ac.PodTemplateSpec().WithLabels(labels).WithSpec(corev1ac.PodSpec().WithContainers(
			corev1ac.Container().WithName(first).WithImage("nginx:1.27"),
			corev1ac.Container().WithName(second).WithImage("nginx:1.27"),
		))))
}

func widgetIntent(ns string) *widget.Widget {
	return &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "target"}, Spec: widget.WidgetSpec{Size: 3}}
}

func wantData(want map[string]string) func(t *testing.T, ns string) {
	return func(t *testing.T, ns string) {
		t.Helper()
		if diff := cmp.Diff(want, getData(t, ns, "target")); diff != "" {
			t.Errorf("data on the server (-want +got):\n%s", diff)
		}
	}
}

// Unchanged without a request is as current as the cache: right after
// another manager's write, before the watch brings it, an apply may answer
// Unchanged while the server holds their value. Once the cache has their
// write (as when its watch event re-runs the reconcile), the next apply
// sends one request and the server holds our value again. The operator
// takes its field back (Force), as a controller does with its children.
func TestForeignWriteConverges(t *testing.T) {
	ns := cluster.Namespace(t)
	op := startOperator(t, ns, apply.KeepManagedFields(owner))
	ours := configMapAC(ns, "cm", map[string]string{"k": "ours"})
	res, _ := op.applyCounted(t, ours)
	waitCached(t, op.cache, cmKey(ns, "cm"), res.Object().GetResourceVersion())
	lagged := 0
	for i := range 5 {
		theirs := configMapAC(ns, "cm", map[string]string{"k": "theirs-" + strings.Repeat("!", i)})
		if err := cluster.Client().Apply(t.Context(), theirs, client.FieldOwner("someone-else"), client.ForceOwnership); err != nil {
			t.Fatal(err)
		}
		res, sent := op.applyCounted(t, ours, apply.Force(true))
		switch {
		case sent == 0 && res.Outcome != apply.Unchanged:
			t.Fatalf("round %d: %s with no request", i, res.Outcome)
		case sent == 0:
			// The cache had not seen their write yet.
			lagged++
			waitCached(t, op.cache, cmKey(ns, "cm"), *theirs.ResourceVersion)
			if res, sent = op.applyCounted(t, ours, apply.Force(true)); res.Outcome != apply.Updated || sent != 1 {
				t.Errorf("round %d: apply once the cache has their write = %s with %d requests, want Updated with 1", i, res.Outcome, sent)
			}
		case res.Outcome != apply.Updated:
			t.Errorf("round %d: apply right after their write = %s with %d requests, want Updated", i, res.Outcome, sent)
		}
		if got := getData(t, ns, "cm")["k"]; got != "ours" {
			t.Errorf("round %d: data.k on the server = %q, want ours", i, got)
		}
		waitCached(t, op.cache, cmKey(ns, "cm"), res.Object().GetResourceVersion())
	}
	t.Logf("%d of 5 applies right after a foreign write answered Unchanged from a lagging cache", lagged)
}
