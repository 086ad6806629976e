package echoserver_test

import (
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kopcontroller "github.com/kopgo/kopgo/controller"
	"github.com/kopgo/kopgo/examples/echoserver"
	"github.com/kopgo/kopgo/examples/echoserver/api/v1alpha1"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/testkit"
)

var cluster *testkit.Cluster

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

func TestMain(m *testing.M) {
	if fuzzWorker() {
		// A fuzzing worker runs only the fuzz target: no cluster.
		os.Exit(m.Run())
	}
	// The operators' logs would be noise (TestHostileSpecs makes a terminal
	// error log per bad EchoServer); tests read status and metrics.
	ctrl.SetLogger(logr.Discard())
	testkit.Main(m, testkit.Options{CRDPaths: []string{"config/crd"}, Scheme: newScheme()}, func(c *testkit.Cluster) { cluster = c })
}

// fuzzWorker reports whether this process is a worker of `go test -fuzz`,
// which runs nothing but the fuzz target (the process that starts the
// workers runs the tests, with the cluster, first).
func fuzzWorker() bool {
	flag.Parse()
	f := flag.Lookup("test.fuzzworker")
	return f != nil && f.Value.String() == "true"
}

// startOperator runs the EchoServer controller, wired as in
// cmd/echoserver, on a manager of its own that watches ns only and
// authenticates as a user holding nothing but the generated ClusterRole
// (config/rbac/role.yaml), bound in ns: the test proves the RBAC markers too.
// The controller, its field owner and its role are named after ns, unique
// in the process (as controller names must be) and in the cluster.
//
// checkRBAC fails the test if a request was refused or a rule of the role
// was never needed: call it once the operator has done all it will.
func startOperator(t *testing.T, ns string) (name string, requests *traffic, checkRBAC func()) {
	t.Helper()
	name = ns
	ctx := t.Context()
	c := cluster.Client()
	f, err := os.Open("config/rbac/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var role rbacv1.ClusterRole
	if err := utilyaml.NewYAMLOrJSONDecoder(f, 4096).Decode(&role); err != nil {
		t.Fatal(err)
	}
	role.Name = name // one role per test: the file's rules, nothing else
	if err := c.Create(ctx, &role); err != nil {
		t.Fatal(err)
	}
	user := "system:serviceaccount:" + ns + ":" + name
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if err := c.Create(ctx, binding); err != nil {
		t.Fatal(err)
	}
	userCfg, err := cluster.UserConfig(user)
	if err != nil {
		t.Fatal(err)
	}
	cfg, perms := testkit.RecordPermissions(userCfg)
	checkRBAC = func() {
		t.Helper()
		if denied := perms.Denied(); len(denied) > 0 {
			t.Errorf("refused requests (missing RBAC rules): %v", denied)
		}
		if unused := perms.Unused(role.Rules,
			testkit.BlockOwnerDeletion(v1alpha1.GroupVersion.Group, "echoservers"),
			testkit.PatchEvents,
			// The metrics endpoint's reviews: this in-process operator
			// serves no metrics (the binary test scrapes them).
			testkit.MetricsTokenReview, testkit.MetricsAccessReview); len(unused) > 0 {
			t.Errorf("RBAC rules never used (excess permissions): %v; used: %v", unused, perms.Used())
		}
	}
	requests = &traffic{byObject: map[string]int{}}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			requests.record(r)
			return rt.RoundTrip(r)
		})
	})
	mgr, err := manager.New(cfg, manager.Options{
		Scheme:  newScheme(),
		Metrics: metricsserver.Options{BindAddress: "0"},
		Cache:   cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	err = kopcontroller.New[*v1alpha1.EchoServer](name, reconciler.Sync(echoserver.ChildKinds(), echoserver.Sync)).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		Setup(mgr)
	if err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(mctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return name, requests, checkRBAC
}

// traffic counts the operator's requests: all of them, and those about each
// EchoServer by name (to the EchoServer, its status or a child, which
// shares its name).
type traffic struct {
	all      atomic.Int64
	mu       sync.Mutex
	byObject map[string]int
}

// record counts r; a path .../namespaces/<ns>/<resource>/<name>[/status]
// is about the EchoServer <name> for EchoServers, Deployments and Services.
func (tr *traffic) record(r *http.Request) {
	tr.all.Add(1)
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	i := slices.Index(parts, "namespaces")
	if i < 0 || len(parts) < i+4 {
		return
	}
	switch parts[i+2] {
	case "echoservers", "deployments", "services":
		tr.mu.Lock()
		tr.byObject[parts[i+3]]++
		tr.mu.Unlock()
	}
}

// about returns the number of requests about the EchoServer name so far.
func (tr *traffic) about(name string) int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.byObject[name]
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// quiet waits until the operator sends no request for a whole second: its
// own status writes and applies do not feed an endless loop.
func quiet(t *testing.T, requests *traffic) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		before := requests.all.Load()
		time.Sleep(time.Second)
		if requests.all.Load() == before {
			return
		}
	}
	t.Fatal("the operator kept sending requests for 15s with nothing to do")
}

// eventually polls cond until it holds, and fails the test with cond's last
// explanation when it does not within 30s.
func eventually(t *testing.T, what string, cond func(ctx context.Context) (ok bool, why string)) {
	t.Helper()
	var why string
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var ok bool
		ok, why = cond(ctx)
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: %s", what, why)
	}
}

func get[O client.Object](ctx context.Context, ns, name string, obj O) (O, string) {
	if err := cluster.Client().Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		return obj, err.Error()
	}
	return obj, ""
}

func condition(es *v1alpha1.EchoServer, t string) string {
	c := status.Get(es, t)
	if c == nil {
		return "-"
	}
	return string(c.Status) + "/" + c.Reason
}

// rollOut plays the Deployment controller (absent from a bare control
// plane): it reports the current generation fully rolled out.
func rollOut(t *testing.T, ns, name string, replicas int32) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var dep appsv1.Deployment
		if err := cluster.Client().Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &dep); err != nil {
			return err
		}
		dep.Status = appsv1.DeploymentStatus{
			ObservedGeneration: dep.Generation, Replicas: replicas, UpdatedReplicas: replicas,
			ReadyReplicas: replicas, AvailableReplicas: replicas,
		}
		return cluster.Client().Status().Update(t.Context(), &dep)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestEchoServerLifecycle(t *testing.T) {
	ns := cluster.Namespace(t)
	_, requests, checkRBAC := startOperator(t, ns)
	defer checkRBAC()
	c := cluster.Client()
	es := &v1alpha1.EchoServer{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello"},
		Spec:       v1alpha1.EchoServerSpec{Message: "hello, world", Replicas: new(int32(2)), Port: 8080},
	}
	if err := c.Create(t.Context(), es); err != nil {
		t.Fatal(err)
	}

	// The children appear, owned by the EchoServer, with the message.
	eventually(t, "Deployment with the message", func(ctx context.Context) (bool, string) {
		dep, why := get(ctx, ns, "hello", &appsv1.Deployment{})
		if why != "" {
			return false, why
		}
		if !metav1.IsControlledBy(dep, es) {
			return false, "Deployment not controlled by the EchoServer"
		}
		args := dep.Spec.Template.Spec.Containers[0].Args
		if diff := cmp.Diff([]string{"-text=hello, world", "-listen=:8080"}, args); diff != "" {
			return false, "args (-want +got):\n" + diff
		}
		if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 2 {
			return false, "replicas not 2"
		}
		return true, ""
	})
	eventually(t, "Service", func(ctx context.Context) (bool, string) {
		svc, why := get(ctx, ns, "hello", &corev1.Service{})
		if why != "" {
			return false, why
		}
		want := []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 8080, TargetPort: intstr.FromString("http")}}
		if diff := cmp.Diff(want, svc.Spec.Ports); diff != "" || !metav1.IsControlledBy(svc, es) {
			return false, "ports (-want +got):\n" + diff
		}
		return true, ""
	})

	// Until the Deployment rolls out, the EchoServer says it is working.
	eventually(t, "status while rolling out", func(ctx context.Context) (bool, string) {
		got, why := get(ctx, ns, "hello", &v1alpha1.EchoServer{})
		if why != "" {
			return false, why
		}
		if condition(got, status.Ready) != "Unknown/Progressing" || condition(got, status.Reconciling) != "True/Progressing" ||
			got.Status.ObservedGeneration != got.Generation {
			return false, "status: " + fmtStatus(got)
		}
		return true, ""
	})

	rollOut(t, ns, "hello", 2)
	eventually(t, "Ready once rolled out", func(ctx context.Context) (bool, string) {
		got, why := get(ctx, ns, "hello", &v1alpha1.EchoServer{})
		if why != "" {
			return false, why
		}
		ready := status.Get(got, status.Ready)
		if !status.IsTrue(got, status.Ready) || ready.Reason != "Available" || ready.Message != "Deployment hello: 2 of 2 replicas available" ||
			got.Status.ReadyReplicas != 2 || status.Get(got, status.Reconciling) != nil {
			return false, "status: " + fmtStatus(got)
		}
		return true, ""
	})
	quiet(t, requests)

	// A new message updates the Deployment, and status follows the new rollout.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var cur v1alpha1.EchoServer
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(es), &cur); err != nil {
			return err
		}
		cur.Spec.Message = "bonjour"
		return c.Update(t.Context(), &cur)
	})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "Deployment with the new message", func(ctx context.Context) (bool, string) {
		dep, why := get(ctx, ns, "hello", &appsv1.Deployment{})
		if why != "" {
			return false, why
		}
		if args := dep.Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, "-text=bonjour") {
			return false, "args " + cmp.Diff(nil, args)
		}
		return true, ""
	})
	eventually(t, "not Ready while the new message rolls out", func(ctx context.Context) (bool, string) {
		got, why := get(ctx, ns, "hello", &v1alpha1.EchoServer{})
		if why != "" {
			return false, why
		}
		if got.Generation != 2 || got.Status.ObservedGeneration != 2 || condition(got, status.Reconciling) != "True/Progressing" {
			return false, "status: " + fmtStatus(got)
		}
		return true, ""
	})
	rollOut(t, ns, "hello", 2)
	eventually(t, "Ready again", func(ctx context.Context) (bool, string) {
		got, why := get(ctx, ns, "hello", &v1alpha1.EchoServer{})
		if why != "" {
			return false, why
		}
		return status.IsTrue(got, status.Ready), "status: " + fmtStatus(got)
	})

	// A child deleted by someone comes back.
	if err := c.Delete(t.Context(), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Service re-created", func(ctx context.Context) (bool, string) {
		svc, why := get(ctx, ns, "hello", &corev1.Service{})
		if why != "" {
			return false, why
		}
		return svc.DeletionTimestamp.IsZero(), "Service being deleted"
	})
}

// Without port and replicas, the CRD's default port applies and the
// Deployment's replicas are left to its own default: not owned, so another
// field manager (an autoscaler) may set them.
func TestEchoServerDefaults(t *testing.T) {
	ns := cluster.Namespace(t)
	operator, _, _ := startOperator(t, ns)
	es := &v1alpha1.EchoServer{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain"},
		Spec:       v1alpha1.EchoServerSpec{Message: "hi"},
	}
	if err := cluster.Client().Create(t.Context(), es); err != nil {
		t.Fatal(err)
	}
	if es.Spec.Port != echoserver.DefaultPort {
		t.Errorf("spec.port defaulted to %d, want %d", es.Spec.Port, echoserver.DefaultPort)
	}
	eventually(t, "Deployment", func(ctx context.Context) (bool, string) {
		dep, why := get(ctx, ns, "plain", &appsv1.Deployment{})
		if why != "" {
			return false, why
		}
		if diff := cmp.Diff([]string{"-text=hi", "-listen=:5678"}, dep.Spec.Template.Spec.Containers[0].Args); diff != "" {
			return false, "args (-want +got):\n" + diff
		}
		owned := false
		for _, mf := range dep.ManagedFields {
			if mf.Manager != operator || mf.Operation != metav1.ManagedFieldsOperationApply || mf.FieldsV1 == nil {
				continue
			}
			owned = true
			if fields := mf.FieldsV1.GetRawString(); !strings.Contains(fields, `"f:template"`) || strings.Contains(fields, `"f:replicas"`) {
				return false, "the operator's fields: " + fields
			}
		}
		return owned, "no fields applied by the operator"
	})
}

// An EchoServer that breaks the CRD's validation is refused by the API
// server: the operator never sees it.
func TestEchoServerValidation(t *testing.T) {
	ns := cluster.Namespace(t)
	for name, spec := range map[string]v1alpha1.EchoServerSpec{
		"empty-message": {Message: ""},
		"port-too-high": {Message: "x", Port: 70000},
		"negative":      {Message: "x", Replicas: new(int32(-1))},
	} {
		err := cluster.Client().Create(t.Context(), &v1alpha1.EchoServer{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec})
		if !apierrors.IsInvalid(err) {
			t.Errorf("%s: Create = %v, want Invalid", name, err)
		}
	}
}

func fmtStatus(es *v1alpha1.EchoServer) string {
	b, _ := json.MarshalIndent(es.Status, "", "  ")
	return "generation " + strconv.FormatInt(es.Generation, 10) + "\n" + string(b)
}

// TestSyncStatus checks the status Sync reports for each state of the
// observed Deployment: a unit test of the sync function, no cluster needed.
func TestSyncStatus(t *testing.T) {
	newES := func() *v1alpha1.EchoServer {
		return &v1alpha1.EchoServer{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "e"},
			Spec:       v1alpha1.EchoServerSpec{Message: "m", Replicas: new(int32(2)), Port: 8080},
		}
	}
	// observed returns the Deployment Sync wants, as the server would hold it
	// at generation 2 with the given status, changed by edit.
	observed := func(st appsv1.DeploymentStatus, edit func(*appsv1.Deployment)) *appsv1.Deployment {
		desired, _, err := echoserver.Sync(t.Context(), newES(), reconciler.Children{})
		if err != nil {
			t.Fatal(err)
		}
		dep := desired[0].(*appsv1.Deployment)
		dep.Namespace, dep.Generation, dep.Status = "ns", 2, st
		if edit != nil {
			edit(dep)
		}
		return dep
	}
	rolled := func(replicas, updated, ready, available int32) appsv1.DeploymentStatus {
		return appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: replicas, UpdatedReplicas: updated, ReadyReplicas: ready, AvailableReplicas: available}
	}
	tests := []struct {
		name      string
		dep       *appsv1.Deployment
		ready     string // status/reason/message
		readyReps int32
	}{
		{"none yet", nil, "Unknown/Creating/creating Deployment e", 0},
		{"old message", observed(rolled(2, 2, 2, 2), func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Args[0] = "-text=old"
		}), "Unknown/Updating/updating Deployment e", 2},
		{"not observed", observed(appsv1.DeploymentStatus{ObservedGeneration: 1, ReadyReplicas: 2}, nil),
			"Unknown/Progressing/Deployment e: waiting for its controller to observe generation 2 (observed 1)", 2},
		{"deadline", observed(appsv1.DeploymentStatus{ObservedGeneration: 2, Conditions: []appsv1.DeploymentCondition{{
			Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded",
			Message: `ReplicaSet "e-abc" has timed out progressing.`,
		}}}, nil), `False/ProgressDeadlineExceeded/Deployment e: progress deadline exceeded: ReplicaSet "e-abc" has timed out progressing.`, 0},
		{"updating", observed(rolled(2, 1, 1, 1), nil), "Unknown/Progressing/Deployment e: 1 of 2 replicas updated", 1},
		{"old pods", observed(rolled(3, 2, 2, 2), nil), "Unknown/Progressing/Deployment e: 1 old replicas pending termination", 2},
		{"unavailable", observed(rolled(2, 2, 1, 1), nil), "Unknown/Progressing/Deployment e: 1 of 2 replicas available", 1},
		{"rolled out", observed(rolled(2, 2, 2, 2), nil), "True/Available/Deployment e: 2 of 2 replicas available", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var children reconciler.Children
			if tt.dep != nil {
				children = append(children, tt.dep)
			}
			es := newES()
			if _, _, err := echoserver.Sync(t.Context(), es, children); err != nil {
				t.Fatal(err)
			}
			c := status.Get(es, status.Ready)
			got := string(c.Status) + "/" + c.Reason + "/" + c.Message
			if got != tt.ready || es.Status.ReadyReplicas != tt.readyReps {
				t.Errorf("Ready = %q, readyReplicas %d; want %q, %d", got, es.Status.ReadyReplicas, tt.ready, tt.readyReps)
			}
			if reconciling := status.Get(es, status.Reconciling) != nil; reconciling == (c.Status == metav1.ConditionTrue) {
				t.Errorf("Reconciling present = %v with Ready %s", reconciling, c.Status)
			}
		})
	}
}
