package resources_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/resources"
	"github.com/kopgo/kopgo/scope"
)

// faultClient is a fake client that knows ConfigMaps, with funcs
// intercepting its calls: for fault injection and option capture only.
func faultClient(funcs interceptor.Funcs, objs ...client.Object) client.WithWatch {
	mapper := apimeta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), apimeta.RESTScopeNamespace)
	return fake.NewClientBuilder().WithRESTMapper(mapper).WithObjects(objs...).WithInterceptorFuncs(funcs).Build()
}

func TestPollRetriesUnavailableOnly(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "x"}}
	gr := schema.GroupResource{Resource: "configmaps"}
	tests := []struct {
		name      string
		fault     error
		wantErr   bool
		wantKind  koperrors.Kind
		wantReads int
	}{
		{"unavailable is retried", apierrors.NewServiceUnavailable("restarting"), false, 0, 3},
		{"forbidden ends the poll", apierrors.NewForbidden(gr, "x", nil), true, koperrors.Forbidden, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reads := 0
			c := faultClient(interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				reads++
				if reads <= 2 {
					return tt.fault
				}
				return c.Get(ctx, key, obj, opts...)
			}}, cm)
			got, err := resources.Poll(t.Context(), c, scope.Namespaced("ns"), "x",
				func(*corev1.ConfigMap) (bool, error) { return true, nil }, resources.Interval(time.Millisecond))
			if !tt.wantErr {
				if err != nil || got == nil {
					t.Errorf("Poll = %v, %v; want the object", got, err)
				}
			} else if koperrors.KindOf(err) != tt.wantKind || got != nil {
				t.Errorf("Poll = %v, %v; want nil and Kind %v", got, err, tt.wantKind)
			}
			if reads != tt.wantReads {
				t.Errorf("%d reads, want %d", reads, tt.wantReads)
			}
		})
	}
}
