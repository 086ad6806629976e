package finalizers_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/finalizers"
)

// fakeServer answers patches without an API server, to inject faults: it
// tells probes (patches of tests only) from changes, and counts both.
type fakeServer struct {
	change          func(obj client.Object) error // answers a patch that changes something
	probe           func(obj client.Object) error // answers a patch of tests only
	changes, probes int
}

func (f *fakeServer) Patch(ctx context.Context, obj client.Object, patch client.Patch, _ ...client.PatchOption) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := patch.Data(obj)
	if err != nil {
		return err
	}
	var ops []struct{ Op string }
	if err := json.Unmarshal(data, &ops); err != nil {
		return err
	}
	for _, op := range ops {
		if op.Op != "test" {
			f.changes++
			return f.change(obj)
		}
	}
	f.probes++
	return f.probe(obj)
}

// refusedByTest is the API server's answer to a JSON patch whose test
// failed.
func refusedByTest() error {
	return apierrors.NewGenericServerResponse(422, "PATCH", schema.GroupResource{Resource: "configmaps"}, "cm", "test failed", 0, false)
}

func inHand() *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm", UID: "u1", ResourceVersion: "1"}}
}

func TestFaults(t *testing.T) {
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "cm",
		field.ErrorList{field.Invalid(field.NewPath("data"), "x", "rejected by a new rule")})
	rv := 1
	tests := []struct {
		name                    string
		change, probe           func(client.Object) error
		wantKind                koperrors.Kind
		wantCause               error // reachable with errors.Is
		wantChanges, wantProbes int
	}{
		{
			name:     "refused for a reason of its own: the probe shows nothing changed",
			change:   func(client.Object) error { return invalid },
			probe:    func(client.Object) error { return nil },
			wantKind: koperrors.Invalid, wantCause: invalid, wantChanges: 1, wantProbes: 1,
		},
		{
			name:   "losing every race: bounded",
			change: func(client.Object) error { return refusedByTest() },
			probe: func(obj client.Object) error {
				rv++
				obj.SetResourceVersion(strconv.Itoa(rv))
				return nil
			},
			wantKind: koperrors.Conflict, wantChanges: 50, wantProbes: 50,
		},
		{
			name: "forbidden: no retry",
			change: func(client.Object) error {
				return apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "cm", errors.New("rbac"))
			},
			wantKind: koperrors.Forbidden, wantChanges: 1,
		},
		{
			name:     "server error: no retry",
			change:   func(client.Object) error { return apierrors.NewInternalError(errors.New("etcd")) },
			wantKind: koperrors.Unavailable, wantChanges: 1,
		},
		{
			name:     "replaced object: the probe's UID test fails",
			change:   func(client.Object) error { return refusedByTest() },
			probe:    func(client.Object) error { return refusedByTest() },
			wantKind: koperrors.NotFound, wantChanges: 1, wantProbes: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeServer{change: tt.change, probe: tt.probe}
			obj := inHand()
			changed, err := finalizers.Add(t.Context(), f, obj, ours)
			if changed || koperrors.KindOf(err) != tt.wantKind {
				t.Errorf("Add = %t, %v (Kind %s), want false and Kind %s", changed, err, koperrors.KindOf(err), tt.wantKind)
			}
			if tt.wantCause != nil && !errors.Is(err, tt.wantCause) {
				t.Errorf("error %v does not wrap the server's %v", err, tt.wantCause)
			}
			if f.changes != tt.wantChanges || f.probes != tt.wantProbes {
				t.Errorf("%d patches and %d probes, want %d and %d", f.changes, f.probes, tt.wantChanges, tt.wantProbes)
			}
		})
	}
}

func TestCancelWhileBackingOff(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	rv := 1
	f := &fakeServer{
		change: func(client.Object) error { return refusedByTest() },
		probe: func(obj client.Object) error {
			if rv++; rv == 3 {
				cancel()
			}
			obj.SetResourceVersion(strconv.Itoa(rv))
			return nil
		},
	}
	start := time.Now()
	_, err := finalizers.Add(ctx, f, inHand(), ours)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Add = %v, want context.Canceled", err)
	}
	if f.changes != 2 || time.Since(start) > time.Second {
		t.Errorf("%d patches in %s after the cancel, want 2 and no wait", f.changes, time.Since(start))
	}
}
