package apply

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
)

// toIntent keeps what the caller set and drops what a Go struct adds by
// itself: status, creationTimestamp: null, nulls, the empty objects of
// non-pointer structs, and server-set metadata.
func TestToIntent(t *testing.T) {
	labels := map[string]string{"app": "web"}
	podSpec := corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}
	wantTemplate := map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx"}}},
	}
	tests := []struct {
		name string
		in   any
		want map[string]any
	}{
		{
			name: "typed Deployment with nil replicas and zero structs",
			in: &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"},
				Spec: appsv1.DeploymentSpec{
					Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec},
				},
			},
			want: map[string]any{
				"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"namespace": "ns", "name": "web"},
				"spec": map[string]any{
					"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
					"template": wantTemplate,
				},
			},
		},
		{
			name: "explicit values are kept, zero ones too",
			in: &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", ResourceVersion: "42", UID: "u-1",
					CreationTimestamp: metav1.Now(), Generation: 3, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "x"}}},
				Spec: appsv1.DeploymentSpec{
					Replicas: ptr.To[int32](0),
					Paused:   true,
					Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
					Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec},
				},
				Status: appsv1.DeploymentStatus{Replicas: 3},
			},
			want: map[string]any{
				"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"namespace": "ns", "name": "web"},
				"spec": map[string]any{
					"replicas": int64(0),
					"paused":   true,
					"strategy": map[string]any{"type": "Recreate"},
					"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
					"template": wantTemplate,
				},
			},
		},
		{
			name: "apply configuration as written",
			in:   corev1ac.ConfigMap("cm", "ns").WithData(map[string]string{"k": "v"}),
			want: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"namespace": "ns", "name": "cm"},
				"data":     map[string]any{"k": "v"},
			},
		},
		{
			name: "unstructured as written, nulls included",
			in: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"namespace": "ns", "name": "cm", "labels": nil},
			}},
			want: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"namespace": "ns", "name": "cm", "labels": nil},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := toIntent(tt.in, clientgoscheme.Scheme)
			if err != nil {
				t.Fatal(err)
			}
			got, err := in.object()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got.Object); diff != "" {
				t.Errorf("intent (-want +got):\n%s", diff)
			}
		})
	}
}

func TestManagerOf(t *testing.T) {
	tests := []struct{ message, want string }{
		{`conflict with "hpa"`, "hpa"},
		{`conflict with "kubectl" with subresource "status" using v1 at 2026-01-01T00:00:00Z`, "kubectl"},
		{`conflict with "a \"quoted\" name" using v1`, `a "quoted" name`},
		{"something else", "something else"},
	}
	for _, tt := range tests {
		t.Run(tt.message, func(t *testing.T) {
			if got := managerOf(tt.message); got != tt.want {
				t.Errorf("managerOf(%q) = %q, want %q", tt.message, got, tt.want)
			}
		})
	}
}
