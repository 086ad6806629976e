// Package meta names objects and builds their metadata: [ObjectRef] is
// kopgo's one identity type, and [Builder] builds metav1.ObjectMeta fluently
// and checks it locally, before anything reaches the API server.
//
// apimachinery has a meta package too, so import this one as kopmeta; kopgo's
// own code always does:
//
//	import kopmeta "github.com/kopgo/kopgo/meta"
//
// # Naming objects
//
// [ObjectRef] (group, kind, namespace, name) identifies an object everywhere
// in kopgo: in errors (koperrors.Error.Object), in what gc deleted, in the
// children a parent wants. It has no version and no UID, so a child wanted
// and not yet created equals the one that exists, and it is comparable: a
// map key, or a set with apimachinery's sets.Set[ObjectRef]. [RefOf] names
// a client.Object from its TypeMeta (or Go type name), for messages.
//
// # Building metadata
//
// Start with [New] (a fixed name) or [GenerateName] (a server-generated
// one), chain what the object needs, and finish with one of three terminal
// methods:
//
//	b := kopmeta.New("web").
//		Namespace(app.Namespace).
//		Label("app.kubernetes.io/name", "web").
//		Annotation("example.com/owner-team", "payments").
//		Finalizer("example.com/cleanup").
//		ControlledBy(app, examplev1.GroupVersion.WithKind("WebApp"))
//
//	om, err := b.Build()              // metav1.ObjectMeta, for typed objects
//	ac, err := b.ApplyConfiguration() // *metav1ac.ObjectMetaApplyConfiguration, for server-side apply
//	err = b.ApplyTo(deployment)       // onto an existing client.Object, merging
//
// [Builder.Build] and [Builder.ApplyConfiguration] produce the same
// metadata (they serialise to the same JSON); the apply form holds only what
// was set, so a field manager applying it owns nothing else.
// [Builder.ApplyTo] merges: labels, annotations, finalizers and owner
// references the object already has are kept, never dropped.
//
// # Owners
//
// [Builder.Owner] and [Builder.ControlledBy] take the owner object and its
// GroupVersionKind. A typed object read through a client has an empty
// TypeMeta, so the caller names the kind (usually
// myv1.GroupVersion.WithKind("MyKind")); an empty GroupVersionKind falls back
// to the object's TypeMeta, and if that is empty too the terminal methods say
// so. Unlike controllerutil, no runtime.Scheme is needed; a reconciler that
// has one can ask it (apiutil is controller-runtime's pkg/client/apiutil):
//
//	gvk, err := apiutil.GVKForObject(app, r.Scheme)
//
// An owner must have a UID (it must exist on the server), must be in the
// object's namespace unless it is cluster-scoped, and at most one owner may
// be the controller: a second controller reference is an error naming both
// owners. The same owner (by UID) added twice is one reference, and adding
// an owner again never demotes its controller reference.
//
// # Reuse
//
// Results never share maps, slices or pointers with the Builder or with each
// other, so one Builder can produce metadata for many objects. Methods change
// the Builder they are called on; [Builder.Clone] branches a shared base:
//
//	base := kopmeta.GenerateName("job-").Namespace("batch").Label("team", "data")
//	a, _ := base.Clone().Label("shard", "a").Build()
//	b, _ := base.Clone().Label("shard", "b").Build()
//
// # Validation
//
// The terminal methods check what the API server would reject, and report
// every problem at once as a [*ValidationError] whose Fields (a
// field.ErrorList) name the path and the offending value:
//
//	invalid metadata: metadata.name: Invalid value: "Web": a lowercase RFC 1123 subdomain ...; metadata.finalizers[0]: Invalid value: "cleanup": must be domain-qualified, ...
//
// The error is also an apierrors.APIStatus with reason Invalid, so
// apierrors.IsInvalid(err) is true, as for the API server's own 422, and
// kopgo's errors package classifies it as Invalid.
//
// What is checked, with the API server's own functions where it has them (a
// test runs the API server's ObjectMeta validation on the same input and
// requires the same fields to be refused, apart from the stricter
// finalizer rule):
//
//   - name: a DNS-1123 subdomain by default; [Builder.NameRule] selects
//     [DNS1123Label] (Namespace), [DNS1035Label] (Service) or
//     [PathSegmentName] (RBAC kinds). The generateName prefix follows the
//     same rule, as a prefix. Name and generateName may not both be empty.
//   - namespace: a DNS-1123 label.
//   - labels: keys are qualified names, values valid label values.
//   - annotations: keys are qualified names (case ignored), and keys plus
//     values total at most 256 KiB, counted as the API server counts them.
//   - finalizers: qualified names that include a domain, like
//     "example.com/cleanup". The API server only warns about a finalizer
//     without one, but two controllers that pick the same bare word
//     ("cleanup") each remove the other's finalizer, and a cleanup is skipped.
//     So this package refuses them. Kubernetes' own finalizers ("orphan",
//     "foregroundDeletion", "kubernetes") are allowed.
//   - owner references: apiVersion, kind, name and uid set; the owner in the
//     object's namespace; one controller at most.
//
// Only what the Builder contributes is checked: [Builder.ApplyTo] does not
// judge what an object already holds (it passed the server's checks, and may
// carry another controller's bare finalizer).
package meta
