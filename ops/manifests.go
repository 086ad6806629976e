package ops

import (
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Scrape says how Prometheus reaches an operator's metrics: kopgo serves
// them over HTTPS, authenticating the caller's token and authorizing it
// through the API server (a SubjectAccessReview for GET on the
// non-resource URL /metrics), as kubebuilder's scaffold does.
type Scrape struct {
	// Namespace the operator runs in, and where its ServiceMonitor goes.
	Namespace string
	// Name of the operator: prefixes the objects' names.
	Name string
	// Selector picks the operator's metrics Service by its labels.
	Selector map[string]string
	// Port is the name of the Service's metrics port.
	Port string
	// Prometheus is the service account Prometheus scrapes as, granted the
	// metrics-reader ClusterRole.
	Prometheus rbacv1.Subject
}

// DefaultScrape is the configuration the committed manifests are made
// with: kubebuilder's names (a Service labelled
// control-plane=controller-manager with port https) and kube-prometheus's
// Prometheus service account.
var DefaultScrape = Scrape{
	Namespace:  "kopgo-system",
	Name:       "kopgo-operator",
	Selector:   map[string]string{"control-plane": "controller-manager"},
	Port:       "https",
	Prometheus: rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "monitoring", Name: "prometheus-k8s"},
}

// ServiceMonitor returns the prometheus-operator ServiceMonitor that
// scrapes the operator's /metrics over HTTPS with the service account's
// token. The certificate is not verified (kopgo's default serving
// certificate is self-signed); with a certificate from cert-manager, set
// the endpoint's tlsConfig to its CA.
func ServiceMonitor(s Scrape) *monitoringv1.ServiceMonitor {
	scheme := monitoringv1.SchemeHTTPS
	insecure := true
	ep := monitoringv1.Endpoint{
		Port:            s.Port,
		Path:            "/metrics",
		Scheme:          &scheme,
		BearerTokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token", //nolint:staticcheck // the token of Prometheus's own service account, as kubebuilder's scaffold reads it
	}
	ep.TLSConfig = &monitoringv1.TLSConfig{SafeTLSConfig: monitoringv1.SafeTLSConfig{InsecureSkipVerify: &insecure}}
	return &monitoringv1.ServiceMonitor{
		TypeMeta:   metav1.TypeMeta{APIVersion: monitoringv1.SchemeGroupVersion.String(), Kind: monitoringv1.ServiceMonitorsKind},
		ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name + "-metrics", Labels: s.Selector},
		Spec: monitoringv1.ServiceMonitorSpec{
			Endpoints: []monitoringv1.Endpoint{ep},
			Selector:  metav1.LabelSelector{MatchLabels: s.Selector},
		},
	}
}

// MetricsRBAC returns what authorized scraping needs: the metrics-reader
// ClusterRole (GET on /metrics) bound to Prometheus's service account,
// and the ClusterRole the operator itself needs to check a scraper's
// token and authority (create TokenReviews and SubjectAccessReviews); bind
// that one to the operator's service account in its own deployment.
func MetricsRBAC(s Scrape) []any {
	reader := &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: s.Name + "-metrics-reader"},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: s.Name + "-metrics-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: reader.Name},
		Subjects:   []rbacv1.Subject{s.Prometheus},
	}
	auth := &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: s.Name + "-metrics-auth"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
			{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"}},
		},
	}
	return []any{reader, binding, auth}
}
