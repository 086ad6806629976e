package controller

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The index function of a References call: empty and repeated names are
// left out, another type names nothing, and a name function that panics
// names nothing instead of stopping the informer (and the process).
func TestIndexNames(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	for _, tc := range []struct {
		name  string
		names func(*corev1.Pod) []string
		obj   client.Object
		want  []string
	}{
		{"names", func(*corev1.Pod) []string { return []string{"a", "", "b", "a"} }, pod, []string{"a", "b"}},
		{"none", func(*corev1.Pod) []string { return nil }, pod, nil},
		{"another type", func(*corev1.Pod) []string { return []string{"a"} }, &corev1.Secret{}, nil},
		{"panic", func(p *corev1.Pod) []string { return []string{p.Spec.Containers[3].Name} }, pod, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := indexNames("f", tc.names)(tc.obj)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("index values (-want +got):\n%s", diff)
			}
		})
	}
}
