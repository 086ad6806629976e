package database

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	kopcontroller "github.com/kopgo/kopgo/controller"
	"github.com/kopgo/kopgo/examples/database/api/v1alpha1"
)

// The operator's permissions, generated into config/rbac/role.yaml by
// `make generate`:
//
//   - databases: list and watch (the cache), patch (kopgo's finalizer),
//     get (kopgo's loop reads a Database live when adding its finalizer
//     fails, to tell one deleted while its first reconcile ran, whose
//     Cleanup it then runs at once: without get, that Database's registry
//     entry stays behind), status patch; databases/finalizers update,
//     which the API server's
//     OwnerReferencesPermissionEnforcement checks when a child's
//     controller reference blocks its owner's deletion.
//   - the children: get (for the rare read the cache cannot answer: the
//     Applier reads a new child live when the cache read fails, or when
//     it does not show an object the Applier remembers applying for
//     another owner, such as a parent deleted and created again; and Sync
//     reads a new child's name live under a manager whose cache of the
//     kind may be filtered, never under the Builder's Run), list and
//     watch (the cache), create and patch (server-side apply); delete on
//     Jobs, whose run Sync replaces when the version changes.
//   - configmaps: list and watch (the registry is read from the cache),
//     create and patch (the registry entries).
//   - events.k8s.io events: the Synced, Registered and Deregistered events.
//
// +kubebuilder:rbac:groups=database.examples.kopgo.dev,resources=databases,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=database.examples.kopgo.dev,resources=databases/status,verbs=patch
// +kubebuilder:rbac:groups=database.examples.kopgo.dev,resources=databases/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=secrets;services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=list;watch;create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
//
// The metrics endpoint (kopgo's secure default) asks the API server who
// the scraper is and whether it may read /metrics:
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
//
// Leader election, in the operator's namespace: the Lease, and the Event
// recording each new leader.
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update,namespace=database-system
// +kubebuilder:rbac:groups="",resources=events,verbs=create,namespace=database-system

// Options configure the operator. The zero value of a field means its
// default.
type Options struct {
	// Name of the controller; its field manager and event reporter are
	// "<Name>-operator", as is its leader-election Lease. Default
	// "database".
	Name string
	// Config reaches the cluster. Default: controller-runtime's
	// GetConfig (--kubeconfig, $KUBECONFIG, in-cluster, ~/.kube/config).
	Config *rest.Config
	// Namespace holds the leader-election Lease and the registry
	// ConfigMap. Default "database-system"; it must exist.
	Namespace string
	// HealthPort serves /healthz and /readyz; MetricsPort serves /metrics.
	// Default 8081 and 8080; -1 turns either off.
	HealthPort, MetricsPort int
	// LeaderElection runs one active replica at a time.
	LeaderElection bool
	// Concurrency is the number of Databases reconciled at once. Default 4.
	Concurrency int
}

func (o Options) withDefaults() Options {
	if o.Name == "" {
		o.Name = "database"
	}
	if o.Namespace == "" {
		o.Namespace = "database-system"
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

// Scheme returns client-go's scheme plus the Database API.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1alpha1.AddToScheme(s))
	return s
}

// New returns the operator: the [Reconciler] run by kopgo's controller
// Builder with the options of o. Call Run(ctx) on it. The child kinds
// need no Owns: the Builder watches a Syncer's child kinds by itself.
func New(o Options) *kopcontroller.Builder[*v1alpha1.Database] {
	o = o.withDefaults()
	b := kopcontroller.New[*v1alpha1.Database](o.Name, NewReconciler(o.Namespace)).
		Scheme(Scheme()).
		FieldOwner(o.Name + "-operator").
		HealthPort(o.HealthPort).
		MetricsPort(o.MetricsPort).
		GracefulShutdown(30 * time.Second).
		ReconcileTimeout(time.Minute).
		Concurrency(o.Concurrency)
	if o.Config != nil {
		b = b.Config(o.Config)
	}
	if o.LeaderElection {
		b = b.LeaderElection(o.Namespace, o.Name+"-operator")
	}
	return b
}
