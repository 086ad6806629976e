package testkit

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// A 403 is a terminating namespace's only when its Status says so, in
// JSON or in protobuf (the content type a client asked for), and the body
// is still there for the client afterwards.
func TestNamespaceTerminating(t *testing.T) {
	terminating := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "x",
		nil).Status()
	terminating.Message = `configmaps "x" is forbidden: unable to create new content in namespace ns because it is being terminated`
	terminating.Details.Causes = []metav1.StatusCause{{
		Type: corev1.NamespaceTerminatingCause, Message: "namespace ns is being terminated", Field: "metadata.namespace",
	}}
	rbac := apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "", nil).Status()
	// As the API server sends them.
	terminating.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	rbac.TypeMeta = terminating.TypeMeta

	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	encoders := map[string]runtime.Encoder{
		"json":     json.NewSerializerWithOptions(json.DefaultMetaFactory, s, s, json.SerializerOptions{}),
		"protobuf": protobuf.NewSerializer(s, s),
	}
	for name, enc := range encoders {
		for _, tc := range []struct {
			status metav1.Status
			want   bool
		}{{terminating, true}, {rbac, false}} {
			var buf bytes.Buffer
			if err := enc.Encode(&tc.status, &buf); err != nil {
				t.Fatal(err)
			}
			body := buf.Bytes()
			resp := &http.Response{StatusCode: http.StatusForbidden, Body: io.NopCloser(bytes.NewReader(body))}
			if got := namespaceTerminating(resp); got != tc.want {
				t.Errorf("%s, %q: namespaceTerminating = %t, want %t", name, tc.status.Message, got, tc.want)
			}
			if rest, _ := io.ReadAll(resp.Body); !bytes.Equal(rest, body) {
				t.Errorf("%s: the body was not put back for the client", name)
			}
		}
	}
	if namespaceTerminating(&http.Response{StatusCode: http.StatusForbidden, Body: io.NopCloser(bytes.NewReader([]byte("not a status")))}) {
		t.Error("a body that is no Status counts as a terminating namespace")
	}
}
