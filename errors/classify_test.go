package errors_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

var gr = schema.GroupResource{Group: "apps", Resource: "deployments"}

func TestKindOf(t *testing.T) {
	fieldConflict := apierrors.NewApplyConflict([]metav1.StatusCause{{
		Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "kubectl"`, Field: ".spec.replicas",
	}}, `Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas`)
	storeRead := &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
		Reason: metav1.StatusReasonStoreReadError, Message: "failed to decrypt",
	}}
	tests := []struct {
		name string
		err  func(*testing.T) error
		want koperrors.Kind
	}{
		// API server statuses, from apimachinery's own constructors.
		{"not found", fixed(apierrors.NewNotFound(gr, "web")), koperrors.NotFound},
		{"404 from a proxy", fixed(apierrors.NewGenericServerResponse(http.StatusNotFound, "GET", gr, "web", "<html>", 0, true)), koperrors.NotFound},
		{"conflict", fixed(apierrors.NewConflict(gr, "web", fmt.Errorf("modified"))), koperrors.Conflict},
		{"already exists", fixed(apierrors.NewAlreadyExists(gr, "web")), koperrors.AlreadyExists},
		{"generate name conflict", fixed(apierrors.NewGenerateNameConflict(gr, "web-", 1)), koperrors.AlreadyExists},
		{"gone", fixed(apierrors.NewGone("too old")), koperrors.Expired}, //nolint:staticcheck // servers still answer 410 Gone
		{"resource expired", fixed(apierrors.NewResourceExpired("too old resource version")), koperrors.Expired},
		{"field manager conflict", fixed(fieldConflict), koperrors.Invalid},
		{"forbidden", fixed(apierrors.NewForbidden(gr, "web", fmt.Errorf("rbac"))), koperrors.Forbidden},
		{"unauthorized", fixed(apierrors.NewUnauthorized("who")), koperrors.Forbidden},
		{"invalid", fixed(apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "web",
			field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), -1, "must be >= 0")})), koperrors.Invalid},
		{"bad request", fixed(apierrors.NewBadRequest("bad")), koperrors.Invalid},
		{"method not supported", fixed(apierrors.NewMethodNotSupported(gr, "patch")), koperrors.Invalid},
		{"not acceptable", fixed(apierrors.NewGenericServerResponse(http.StatusNotAcceptable, "GET", gr, "", "", 0, false)), koperrors.Invalid},
		{"unsupported media type", fixed(apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "PATCH", gr, "web", "", 0, false)), koperrors.Invalid},
		{"entity too large", fixed(apierrors.NewRequestEntityTooLargeError("big")), koperrors.Invalid},
		{"timeout", fixed(apierrors.NewTimeoutError("slow", 1)), koperrors.Timeout},
		{"server timeout", fixed(apierrors.NewServerTimeout(gr, "get", 1)), koperrors.Timeout},
		{"service unavailable", fixed(apierrors.NewServiceUnavailable("down")), koperrors.Unavailable},
		{"too many requests", fixed(apierrors.NewTooManyRequests("slow down", 1)), koperrors.Unavailable},
		{"too many requests error", fixed(apierrors.NewTooManyRequestsError("slow down")), koperrors.Unavailable},
		{"internal error", fixed(apierrors.NewInternalError(fmt.Errorf("etcd"))), koperrors.Unavailable},
		{"502 from a proxy", fixed(apierrors.NewGenericServerResponse(http.StatusBadGateway, "GET", gr, "web", "<html>", 0, true)), koperrors.Unavailable},
		{"store read error", fixed(storeRead), koperrors.Serialization},
		// RESTMapper errors.
		{"no kind match", unknownKind, koperrors.Invalid},
		{"no resource match", unknownResource, koperrors.Invalid},
		{"ambiguous kind", fixed(&apimeta.AmbiguousKindError{PartialKind: schema.GroupVersionKind{Kind: "Widget"}}), koperrors.Invalid},
		// Deadlines.
		{"context deadline", contextDeadline, koperrors.Timeout},
		{"read deadline", readDeadline, koperrors.Timeout},
		// Connections.
		{"dial refused", dialRefused, koperrors.Unavailable},
		{"http refused", httpRefused, koperrors.Unavailable},
		{"connection reset", connectionReset, koperrors.Unavailable},
		{"server hung up", httpEOF, koperrors.Unavailable},
		{"unexpected EOF", truncatedStream, koperrors.Unavailable},
		// Configuration.
		{"not in cluster", notInCluster, koperrors.Config},
		{"empty kubeconfig", emptyKubeconfig, koperrors.Config},
		{"missing context", missingContext, koperrors.Config},
		{"untrusted certificate", untrustedTLS, koperrors.Config},
		// Encoding.
		{"json syntax", jsonSyntax, koperrors.Serialization},
		{"json type", jsonType, koperrors.Serialization},
		{"sigs.k8s.io/json syntax", kjsonSyntax, koperrors.Serialization},
		{"not registered", notRegistered, koperrors.Serialization},
		{"missing kind", missingKind, koperrors.Serialization},
		{"strict decoding", fixed(runtime.NewStrictDecodingError([]error{fmt.Errorf(`unknown field "spec.replica"`)})), koperrors.Serialization},
		// Local files.
		{"missing file", missingFile, koperrors.IO},
		{"rename", renameMissing, koperrors.IO},
		// The rest.
		{"plain", fixed(fmt.Errorf("boom")), koperrors.Internal},
		{"canceled", fixed(context.Canceled), koperrors.Internal},
		{"bare EOF", fixed(io.EOF), koperrors.Internal},
		{"explicit kind wins", fixed(koperrors.WrapKind(koperrors.Config, apierrors.NewNotFound(gr, "web"), "load", kopmeta.ObjectRef{})), koperrors.Config},
		{"joined with a plain error", fixed(errors.Join(fmt.Errorf("other"), apierrors.NewNotFound(gr, "web"))), koperrors.NotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.err(t)
			// The kind survives wrapping at any depth, Join, Terminal and
			// Wrap.
			forms := []error{
				err,
				wrapN(err, 1),
				wrapN(err, 3),
				errors.Join(err),
				koperrors.Terminal(wrapN(err, 2)),
				koperrors.Wrap(err, "get", kopmeta.ObjectRef{}),
			}
			var want, got []koperrors.Kind
			for _, f := range forms {
				want = append(want, tt.want)
				got = append(got, koperrors.KindOf(f))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("KindOf(%q) in forms bare, %%w×1, %%w×3, Join, Terminal, Wrap (-want +got):\n%s", err, diff)
			}
		})
	}
}

func fixed(err error) func(*testing.T) error {
	return func(*testing.T) error { return err }
}

func wrapN(err error, n int) error {
	for i := range n {
		err = fmt.Errorf("layer %d: %w", i, err)
	}
	return err
}

func TestKindOfNil(t *testing.T) {
	if got := koperrors.KindOf(nil); got != koperrors.Internal {
		t.Errorf("KindOf(nil) = %s, want Internal", got)
	}
}

func TestKinds(t *testing.T) {
	var got []string
	for _, k := range koperrors.Kinds() {
		got = append(got, k.String())
	}
	want := []string{"Internal", "NotFound", "Conflict", "Forbidden", "Invalid", "Timeout", "Unavailable", "Serialization", "IO", "Config", "AlreadyExists", "Expired"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Kinds() names (-want +got):\n%s", diff)
	}
	if got := koperrors.Kind(200).String(); got != "Internal" {
		t.Errorf("Kind(200).String() = %q, want Internal (label values stay bounded)", got)
	}
	var retryable []koperrors.Kind
	for _, k := range koperrors.Kinds() {
		if k.Retryable() {
			retryable = append(retryable, k)
		}
	}
	if diff := cmp.Diff([]koperrors.Kind{koperrors.Conflict, koperrors.Timeout, koperrors.Unavailable, koperrors.Expired}, retryable); diff != "" {
		t.Errorf("retryable kinds (-want +got):\n%s", diff)
	}
}
