package operator

// RBAC of the operator, generated into config/rbac by `make generate`.
// Secrets: get for the one Secret a DNSRecord names (read from the API
// server, not cached), list and watch for the metadata-only watch that
// reconciles a DNSRecord when its Secret changes. dnsrecords/finalizers is
// not here: the API server checks it only for an owner reference with
// blockOwnerDeletion, and a DNSRecord has no children; the finalizer
// itself is a patch of the DNSRecord.
//
// +kubebuilder:rbac:groups=dns.examples.kopgo.dev,resources=dnsrecords,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=dns.examples.kopgo.dev,resources=dnsrecords/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update,namespace=dnsrecord-system
// +kubebuilder:rbac:groups="",resources=events,verbs=create,namespace=dnsrecord-system
//
// The metrics endpoint (kopgo's secure default) asks the API server who
// the scraper is and whether it may read /metrics:
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
