package observability_test

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopgo/kopgo/observability"
)

// A plain controller-runtime reconciler reports each object's conditions
// once its status is written, and forgets an object it found deleted;
// kopgo's own loop does both itself.
func ExampleMetrics_ObserveObject() {
	reg := prometheus.NewRegistry()
	m, err := observability.NewMetrics(reg)
	if err != nil {
		fmt.Println(err)
		return
	}
	web := types.NamespacedName{Namespace: "default", Name: "web"}
	db := types.NamespacedName{Namespace: "default", Name: "db"}
	m.ObserveObject("webapp", web, "uid-web", []metav1.Condition{
		{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Succeeded"},
	})
	m.ObserveObject("webapp", db, "uid-db", []metav1.Condition{
		{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Invalid"},
		{Type: "Stalled", Status: metav1.ConditionTrue, Reason: "Invalid"},
	})
	m.ForgetObject("webapp", web) // deleted

	mfs, err := reg.Gather()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, mf := range mfs {
		if mf.GetName() != "kopgo_objects" {
			continue
		}
		for _, s := range mf.GetMetric() {
			if v := s.GetGauge().GetValue(); v > 0 {
				l := s.GetLabel() // condition, controller, status
				fmt.Printf("%s=%s: %v\n", l[0].GetValue(), l[2].GetValue(), v)
			}
		}
	}
	// Output:
	// Ready=False: 1
	// Reconciling=False: 1
	// Stalled=True: 1
}
