package errors_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

func ExampleWrap() {
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	cause := apierrors.NewConflict(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web", fmt.Errorf("the object has been modified"))

	err := koperrors.Wrap(cause, "apply", kopmeta.RefOf(deploy))
	fmt.Println(err)
	fmt.Println(koperrors.KindOf(err), koperrors.KindOf(err) == koperrors.Conflict, errors.Is(err, cause))
	// Output:
	// apply Deployment default/web: Operation cannot be fulfilled on deployments.apps "web": the object has been modified
	// Conflict true true
}

func ExampleKindOf() {
	for _, err := range []error{
		apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "settings"),
		fmt.Errorf("reading spec: %w", apierrors.NewServiceUnavailable("etcd is down")),
		fmt.Errorf("plain"),
	} {
		fmt.Println(koperrors.KindOf(err))
	}
	// Output:
	// NotFound
	// Unavailable
	// Internal
}

func ExampleTerminal() {
	err := koperrors.Terminal(koperrors.Errorf(koperrors.Invalid, "spec.port %d: must be at most 65535", 70000))
	fmt.Println(err)
	fmt.Println(koperrors.IsTerminal(err), koperrors.KindOf(err))
	// Output:
	// spec.port 70000: must be at most 65535
	// true Invalid
}

func ExampleKinds() {
	// The kinds behind kopgo_reconcile_errors_total{error_kind}: a closed set.
	for _, k := range koperrors.Kinds() {
		fmt.Print(k, " ")
	}
	fmt.Println()
	// Output:
	// Internal NotFound Conflict Forbidden Invalid Timeout Unavailable Serialization IO Config AlreadyExists Expired
}

func ExampleFromHTTP() {
	// A provider's answer, as an http.Client returns it (resp.Body is the
	// caller's to close; FromHTTP reads at most 512 bytes of it).
	u, _ := url.Parse("https://dns.example.com/v1/records?zone=example.org")
	resp := &http.Response{
		StatusCode: http.StatusTooManyRequests,
		Header:     http.Header{"Retry-After": {"30"}},
		Body:       io.NopCloser(strings.NewReader(`{"error": "rate limited"}`)),
		Request:    &http.Request{Method: http.MethodPost, URL: u},
	}

	err := koperrors.FromHTTP(resp)
	delay, ok := koperrors.RetryAfterOf(err)
	fmt.Println(err)
	fmt.Println(koperrors.KindOf(err), koperrors.IsTerminal(err), koperrors.ReasonOf(err), delay, ok)

	resp.StatusCode, resp.Header, resp.Body = http.StatusUnauthorized, nil, http.NoBody
	err = koperrors.FromHTTP(resp)
	fmt.Println(koperrors.KindOf(err), koperrors.IsTerminal(err), koperrors.ReasonOf(err))

	// A quota some clouds send as a 403 with Retry-After: retried after it.
	resp.StatusCode, resp.Header = http.StatusForbidden, http.Header{"Retry-After": {"30"}}
	err = koperrors.FromHTTP(resp)
	delay, _ = koperrors.RetryAfterOf(err)
	fmt.Println(koperrors.KindOf(err), koperrors.IsTerminal(err), delay)

	// An update with a stale ETag (If-Match): an optimistic-lock conflict.
	resp.StatusCode, resp.Header, resp.Request.Method = http.StatusPreconditionFailed, nil, http.MethodPut
	err = koperrors.FromHTTP(resp)
	fmt.Println(koperrors.KindOf(err), koperrors.IsTerminal(err))

	// A redirect the client did not follow: the endpoint needs fixing.
	resp.StatusCode, resp.Header, resp.Request.Method = http.StatusMovedPermanently, http.Header{"Location": {"https://api.example.com/v2/records"}}, http.MethodPost
	err = koperrors.FromHTTP(resp)
	fmt.Println(err)
	fmt.Println(koperrors.KindOf(err), koperrors.IsTerminal(err), koperrors.ReasonOf(err))
	// Output:
	// dns.example.com POST /v1/records: 429 Too Many Requests: {"error": "rate limited"}
	// Unavailable false Unavailable 30s true
	// Forbidden true Unauthorized
	// Unavailable false 30s
	// Conflict false
	// dns.example.com POST /v1/records: 301 Moved Permanently: redirect to https://api.example.com/v2/records not followed
	// Invalid true Redirected
}

func ExampleWithReason() {
	quota := koperrors.Errorf(koperrors.Invalid, "provider: 3 of 3 zones in use")
	err := fmt.Errorf("create zone: %w", koperrors.Terminal(koperrors.WithReason(quota, "QuotaExceeded")))
	fmt.Println(err)
	fmt.Println(koperrors.ReasonOf(err), koperrors.KindOf(err), koperrors.IsTerminal(err))

	// An invalid reason falls back to the kind.
	fmt.Println(koperrors.ReasonOf(koperrors.WithReason(quota, "quota exceeded")))
	// Output:
	// create zone: provider: 3 of 3 zones in use
	// QuotaExceeded Invalid true
	// Invalid
}

func ExampleWithRetryAfter() {
	// A client that is not net/http (a gRPC or SDK call) was throttled and
	// told when to come back.
	throttled := koperrors.Errorf(koperrors.Unavailable, "zones API: rate exceeded")
	err := koperrors.WithRetryAfter(throttled, 20*time.Second)
	d, ok := koperrors.RetryAfterOf(fmt.Errorf("create zone: %w", err))
	fmt.Println(d, ok, koperrors.KindOf(err), koperrors.IsTerminal(err))
	// Output:
	// 20s true Unavailable false
}
