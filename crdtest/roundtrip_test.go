package crdtest_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/kopgo/kopgo/crdtest"
)

// A two-version API for the round-trip tests. v1 is the hub: spec.size of
// v1alpha1 is renamed spec.replicas, and spec.tolerations is new in v1.
// v1alpha1 keeps the tolerations it cannot hold in an annotation, as
// cluster-api does (util/conversion.MarshalData).

// conversionData is the annotation that keeps v1's fields in v1alpha1.
const conversionData = "crdtest.kopgo.dev/conversion-data"

type PortV1 struct {
	Name string `json:"name"`
	Port int32  `json:"port"`
}

type WidgetV1Spec struct {
	Replicas    *int32   `json:"replicas,omitempty"`
	Image       string   `json:"image"`
	Ports       []PortV1 `json:"ports,omitempty"`
	Tolerations []string `json:"tolerations,omitempty"`
}

// WidgetV1 is the hub.
type WidgetV1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetV1Spec `json:"spec"`
}

func (*WidgetV1) Hub() {}

func (w *WidgetV1) DeepCopyObject() runtime.Object {
	out := *w
	w.DeepCopyInto(&out.ObjectMeta)
	if w.Spec.Replicas != nil {
		r := *w.Spec.Replicas
		out.Spec.Replicas = &r
	}
	out.Spec.Ports = slices.Clone(w.Spec.Ports)
	out.Spec.Tolerations = slices.Clone(w.Spec.Tolerations)
	return &out
}

type WidgetV1alpha1Spec struct {
	Size  *int32   `json:"size,omitempty"`
	Image string   `json:"image"`
	Ports []PortV1 `json:"ports,omitempty"`
}

// WidgetV1alpha1 is a spoke that keeps what it cannot hold.
type WidgetV1alpha1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetV1alpha1Spec `json:"spec"`
}

func (w *WidgetV1alpha1) DeepCopyObject() runtime.Object {
	out := *w
	w.DeepCopyInto(&out.ObjectMeta)
	if w.Spec.Size != nil {
		s := *w.Spec.Size
		out.Spec.Size = &s
	}
	out.Spec.Ports = slices.Clone(w.Spec.Ports)
	return &out
}

// v1Only is what v1alpha1 keeps in the conversionData annotation.
type v1Only struct {
	Tolerations []string `json:"tolerations,omitempty"`
}

func (w *WidgetV1alpha1) ConvertTo(h conversion.Hub) error {
	dst := h.(*WidgetV1)
	w.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = WidgetV1Spec{Image: w.Spec.Image, Ports: slices.Clone(w.Spec.Ports)}
	if w.Spec.Size != nil {
		s := *w.Spec.Size
		dst.Spec.Replicas = &s
	}
	if data, ok := dst.Annotations[conversionData]; ok {
		var kept v1Only
		if err := json.Unmarshal([]byte(data), &kept); err != nil {
			return fmt.Errorf("convert Widget %s/%s to v1: annotation %s: %w", w.Namespace, w.Name, conversionData, err)
		}
		dst.Spec.Tolerations = kept.Tolerations
		delete(dst.Annotations, conversionData)
	}
	return nil
}

func (w *WidgetV1alpha1) ConvertFrom(h conversion.Hub) error {
	src := h.(*WidgetV1)
	src.DeepCopyInto(&w.ObjectMeta)
	w.Spec = WidgetV1alpha1Spec{Image: src.Spec.Image, Ports: slices.Clone(src.Spec.Ports)}
	if src.Spec.Replicas != nil {
		r := *src.Spec.Replicas
		w.Spec.Size = &r
	}
	if len(src.Spec.Tolerations) > 0 {
		data, err := json.Marshal(v1Only{Tolerations: src.Spec.Tolerations})
		if err != nil {
			return fmt.Errorf("convert Widget %s/%s to v1alpha1: %w", src.Namespace, src.Name, err)
		}
		if w.Annotations == nil {
			w.Annotations = map[string]string{}
		}
		w.Annotations[conversionData] = string(data)
	}
	return nil
}

// WidgetLossy is a spoke whose conversion drops the tolerations: what
// v1alpha1 would be without its annotation.
type WidgetLossy struct{ WidgetV1alpha1 }

func (w *WidgetLossy) DeepCopyObject() runtime.Object {
	return &WidgetLossy{WidgetV1alpha1: *w.WidgetV1alpha1.DeepCopyObject().(*WidgetV1alpha1)}
}

func (w *WidgetLossy) ConvertFrom(h conversion.Hub) error {
	src := h.(*WidgetV1).DeepCopyObject().(*WidgetV1)
	src.Spec.Tolerations = nil
	return w.WidgetV1alpha1.ConvertFrom(src)
}

// recorder is a crdtest.TB that records what would fail a test.
type recorder struct{ errors []string }

func (*recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestCheckRoundTrip(t *testing.T) {
	start := time.Now()
	crdtest.CheckRoundTrip(t, &WidgetV1{}, []conversion.Convertible{&WidgetV1alpha1{}})
	t.Logf("%d round trips each way, v1alpha1 <-> v1: %s", crdtest.DefaultIterations, time.Since(start).Round(time.Millisecond))
}

func TestCheckRoundTripFindsLoss(t *testing.T) {
	tests := []struct {
		name  string
		spoke conversion.Convertible
		opts  []crdtest.RoundTripOption
		want  []string // prefixes of the recorded errors
	}{
		{
			name:  "lossless",
			spoke: &WidgetV1alpha1{},
			opts:  []crdtest.RoundTripOption{crdtest.Iterations(500)},
		},
		{
			name:  "a v1 field dropped",
			spoke: &WidgetLossy{},
			opts:  []crdtest.RoundTripOption{crdtest.Iterations(500)},
			want:  []string{"crdtest_test.WidgetV1 -> crdtest_test.WidgetLossy -> crdtest_test.WidgetV1: iteration 2 (seed 1): Spec.Tolerations lost in the round trip (-want +got):"},
		},
		{
			name:  "the same loss at another seed",
			spoke: &WidgetLossy{},
			opts:  []crdtest.RoundTripOption{crdtest.Iterations(500), crdtest.Seed(7)},
			want:  []string{"crdtest_test.WidgetV1 -> crdtest_test.WidgetLossy -> crdtest_test.WidgetV1: iteration 0 (seed 7): Spec.Tolerations lost in the round trip (-want +got):"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r recorder
			crdtest.CheckRoundTrip(&r, &WidgetV1{}, []conversion.Convertible{tt.spoke}, tt.opts...)
			var got []string
			for i, e := range r.errors {
				if i < len(tt.want) && strings.HasPrefix(e, tt.want[i]) {
					e = tt.want[i]
				}
				got = append(got, e)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CheckRoundTrip errors (-want +got):\n%s", diff)
			}
		})
	}
}
