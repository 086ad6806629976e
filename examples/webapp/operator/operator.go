package operator

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	kopcontroller "github.com/kopgo/kopgo/controller"
	webappv1 "github.com/kopgo/kopgo/examples/webapp/api/v1alpha1"
	"github.com/kopgo/kopgo/owners"
)

// Options configure the operator. The zero value of a field means its
// default.
type Options struct {
	// Name of the controller, its field manager and its leader-election
	// lease. Default "webapp".
	Name string
	// Config reaches the cluster. Default: controller-runtime's
	// GetConfig (--kubeconfig, $KUBECONFIG, in-cluster, ~/.kube/config).
	Config *rest.Config
	// Namespace is where the operator keeps its leader-election lease and
	// its registry ConfigMap. Default "webapp-system"; it must exist.
	Namespace string
	// HealthPort serves /healthz and /readyz; MetricsPort serves /metrics.
	// Default 8081 and 8080; -1 turns either off.
	HealthPort, MetricsPort int
	// LeaderElection runs one active replica at a time.
	LeaderElection bool
	// Concurrency is the number of WebApps reconciled at once. Default 4.
	Concurrency int
	// Selector restricts the operator to WebApps with matching labels
	// (a label selector, "" for all).
	Selector string
}

func (o Options) withDefaults() Options {
	if o.Name == "" {
		o.Name = "webapp"
	}
	if o.Namespace == "" {
		o.Namespace = "webapp-system"
	}
	if o.HealthPort == 0 {
		o.HealthPort = 8081
	}
	if o.MetricsPort == 0 {
		o.MetricsPort = 8080
	}
	if o.Concurrency == 0 {
		o.Concurrency = 4
	}
	return o
}

// Scheme returns client-go's scheme plus the WebApp API.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(webappv1.AddToScheme(s))
	return s
}

// The metrics endpoint (kopgo's secure default) asks the API server who
// the scraper is and whether it may read /metrics:
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// New returns the operator's controller Builder, its options set from o;
// call Run(ctx) on it.
func New(o Options) *kopcontroller.Builder[*webappv1.WebApp] {
	o = o.withDefaults()
	b := kopcontroller.New[*webappv1.WebApp](o.Name, &Reconciler{RegistryNamespace: o.Namespace}).
		Scheme(Scheme()).
		FieldOwner(o.Name+"-operator").
		HealthPort(o.HealthPort).
		MetricsPort(o.MetricsPort).
		GracefulShutdown(30*time.Second).
		ReconcileTimeout(time.Minute).
		Concurrency(o.Concurrency).
		// The cached WebApps drop managedFields: nothing here reads them,
		// and they are often the larger part of an object.
		WatcherConfig(cache.ByObject{Transform: cache.TransformStripManagedFields()}).
		// Children: a change to one (a rollout's progress, a deleted
		// Service) reconciles its WebApp.
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		Owns(&corev1.ConfigMap{}).
		// Secrets are not children: users label them for an app, and the
		// label leads back to the app. Watched as metadata only: the
		// operator never reads a Secret's data, so it keeps none in memory
		// and needs no "get" on Secrets.
		Watch(secretMetadata(), owners.LabelMapper(SecretLabel))
	if o.Config != nil {
		b = b.Config(o.Config)
	}
	if o.LeaderElection {
		b = b.LeaderElection(o.Namespace, o.Name+"-operator")
	}
	if o.Selector != "" {
		b = b.LabelSelector(o.Selector)
	}
	return b
}

// secretMetadata is the metadata-only form of a Secret, for watches and
// lists that need no data.
func secretMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return m
}
