package testkit

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// Permission is one RBAC permission: an API group ("" for the core group), a
// resource, with "/subresource" when there is one, and a verb.
type Permission struct {
	Group, Resource, Verb string
}

func (p Permission) String() string { return p.Group + "/" + p.Resource + " " + p.Verb }

// Permissions an operator needs that no recorded request shows; pass those
// that apply to [Permissions.Unused] as allowed.
var (
	// PatchEvents is "patch" on events.k8s.io events: kopgo's recorder
	// patches an event's series count when the same event repeats for the
	// same version of an object. Any controller that records events needs
	// it, but whether a test run sends it is a matter of timing.
	PatchEvents = Permission{Group: "events.k8s.io", Resource: "events", Verb: "patch"}
	// MetricsTokenReview and MetricsAccessReview are "create" on
	// tokenreviews and subjectaccessreviews: a secure metrics endpoint
	// (kopgo's default) sends them for each scrape, so a test that never
	// scrapes never sees them.
	MetricsTokenReview  = Permission{Group: "authentication.k8s.io", Resource: "tokenreviews", Verb: "create"}
	MetricsAccessReview = Permission{Group: "authorization.k8s.io", Resource: "subjectaccessreviews", Verb: "create"}
)

// BlockOwnerDeletion is "update" on the finalizers subresource of the owner
// kind (group, plural resource): the OwnerReferencesPermissionEnforcement
// admission plugin checks it when a child's owner reference sets
// blockOwnerDeletion, as kopgo's controller references do. It is checked,
// never requested.
func BlockOwnerDeletion(group, resource string) Permission {
	return Permission{Group: group, Resource: resource + "/finalizers", Verb: "update"}
}

// Permissions records the RBAC permissions that the requests of the clients
// made from one [RecordPermissions] config needed, and the requests the API
// server refused. With an operator running as a user bound only to its
// ClusterRole ([Cluster.UserConfig]), a refused request is a missing rule
// and [Permissions.Unused] lists the rules it never needed: how an
// end-to-end test keeps generated RBAC complete and minimal.
//
// A request needs its verb on its resource (GET of a collection is "list",
// of one object "get", with ?watch "watch"; POST "create", PUT "update",
// PATCH "patch", DELETE "delete" or "deletecollection"). Two permissions
// that the API server checks without a request of their own are recorded
// too: "create" when a PATCH created the object (a server-side apply that
// creates), and "list" for a streaming list (a watch with
// sendInitialEvents=true, which client-go's informers use in place of a
// list; servers without it get a list). Permissions checked by admission
// ([BlockOwnerDeletion]) or sent only sometimes ([PatchEvents]) cannot be
// relied on here; pass them to Unused as allowed.
type Permissions struct {
	mu     sync.Mutex
	used   map[Permission]bool
	denied map[string]bool
}

// RecordPermissions returns a copy of cfg whose requests are recorded in the
// returned Permissions. Non-resource requests (discovery, /version) are not.
func RecordPermissions(cfg *rest.Config) (*rest.Config, *Permissions) {
	p := &Permissions{used: map[Permission]bool{}, denied: map[string]bool{}}
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			p.record(req, resp, err)
			return resp, err
		})
	})
	return cfg, p
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func (p *Permissions) record(req *http.Request, resp *http.Response, err error) {
	perm, ok := permissionOf(req)
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.used[perm] = true
	if err != nil {
		return
	}
	if req.Method == http.MethodPatch && resp.StatusCode == http.StatusCreated {
		p.used[Permission{perm.Group, perm.Resource, "create"}] = true
	}
	if perm.Verb == "watch" && req.URL.Query().Get("sendInitialEvents") == "true" {
		p.used[Permission{perm.Group, perm.Resource, "list"}] = true
	}
	if resp.StatusCode == http.StatusForbidden && !namespaceTerminating(resp) {
		p.denied[fmt.Sprintf("%s (%s %s)", perm, req.Method, req.URL.Path)] = true
	}
}

// namespaceTerminating reports whether a 403 response is the API server's
// refusal to create an object in a namespace that is being deleted (the
// NamespaceLifecycle admission plugin, after authorization allowed the
// request): no missing RBAC rule, but what an operator meets when a test's
// namespace goes away under it. The body is read and put back for the
// caller.
func namespaceTerminating(resp *http.Response) bool {
	if resp.Body == nil {
		return false
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return false
	}
	obj, _, err := statusCodecs.UniversalDeserializer().Decode(body, nil, nil)
	if err != nil {
		return false
	}
	status, ok := obj.(*metav1.Status)
	if !ok || status.Details == nil {
		return false
	}
	for _, cause := range status.Details.Causes {
		if cause.Type == corev1.NamespaceTerminatingCause {
			return true
		}
	}
	return false
}

// statusCodecs decodes a metav1.Status in JSON or protobuf, whichever the
// client asked for.
var statusCodecs = func() serializer.CodecFactory {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return serializer.NewCodecFactory(s)
}()

// Used returns the permissions the requests needed, sorted.
func (p *Permissions) Used() []Permission {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Permission, 0, len(p.used))
	for perm := range p.used {
		out = append(out, perm)
	}
	slices.SortFunc(out, func(a, b Permission) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Resource, b.Resource), cmp.Compare(a.Verb, b.Verb))
	})
	return out
}

// Denied returns the requests the API server refused with 403 Forbidden,
// each as its permission, method and path, sorted. A create refused
// because its namespace is being deleted is not among them: that 403 comes
// from the namespace's lifecycle, after RBAC allowed the request.
func (p *Permissions) Denied() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, len(p.denied))
	for d := range p.denied {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// Unused returns the permissions that rules grant and no recorded request
// needed, except those in allowed, in the rules' order. Rules with
// wildcards ("*") or resource names are reported as they are: a test that
// wants minimal RBAC should not grant them.
func (p *Permissions) Unused(rules []rbacv1.PolicyRule, allowed ...Permission) []Permission {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Permission
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					perm := Permission{g, res, v}
					if !p.used[perm] && !slices.Contains(allowed, perm) && !slices.Contains(out, perm) {
						out = append(out, perm)
					}
				}
			}
		}
	}
	return out
}

// permissionOf is the permission req needs; false for a request that is not
// for a resource.
func permissionOf(req *http.Request) (Permission, bool) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	var p Permission
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:] // api/v1/...
	case len(parts) >= 4 && parts[0] == "apis":
		p.Group, parts = parts[1], parts[3:] // apis/<group>/<version>/...
	default:
		return p, false
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:] // namespaces/<ns>/<resource>/...
	}
	p.Resource = parts[0]
	named := len(parts) >= 2
	if len(parts) >= 3 {
		p.Resource += "/" + parts[2]
	}
	switch req.Method {
	case http.MethodGet:
		switch {
		case named:
			p.Verb = "get"
		case req.URL.Query().Get("watch") == "true":
			p.Verb = "watch"
		default:
			p.Verb = "list"
		}
	case http.MethodPost:
		p.Verb = "create"
	case http.MethodPut:
		p.Verb = "update"
	case http.MethodPatch:
		p.Verb = "patch"
	case http.MethodDelete:
		p.Verb = "delete"
		if !named {
			p.Verb = "deletecollection"
		}
	default:
		return p, false
	}
	return p, true
}
