package ops_test

import (
	"fmt"

	"github.com/kopgo/kopgo/ops"
)

// The alerts, with how long each condition must hold before it fires.
func ExampleAlerts() {
	for _, a := range ops.Alerts() {
		fmt.Printf("%-29s %-8s for %v\n", a.Name, a.Severity, a.For)
	}
	// Output:
	// KopgoObjectsStalled           warning  for 0s
	// KopgoObjectsNotReady          warning  for 0s
	// KopgoReconcileErrors          warning  for 15m0s
	// KopgoHotLoop                  warning  for 15m0s
	// KopgoWorkqueueBacklogGrowing  warning  for 15m0s
	// KopgoNoLeader                 critical for 5m0s
	// KopgoControllerStuck          critical for 10m0s
	// KopgoExternalCallsFailing     warning  for 15m0s
}

// Render the ServiceMonitor and PrometheusRule for your own operator
// rather than editing the committed ones.
func ExampleServiceMonitor() {
	s := ops.DefaultScrape
	s.Namespace, s.Name = "webapp-system", "webapp"
	s.Selector = map[string]string{"app.kubernetes.io/name": "webapp"}
	sm := ops.ServiceMonitor(s)
	rule := ops.PrometheusRule(s.Namespace, "webapp-alerts", map[string]string{"release": "prometheus"})
	fmt.Println(sm.Namespace, sm.Name, sm.Spec.Endpoints[0].Port, *sm.Spec.Endpoints[0].Scheme)
	fmt.Println(rule.Name, len(rule.Spec.Groups[0].Rules), "rules")
	// Output:
	// webapp-system webapp-metrics https HTTPS
	// webapp-alerts 8 rules
}
