// Package meta names objects and builds their metadata: [ObjectRef] is
// kopgo's one identity type, [Builder] builds metav1.ObjectMeta fluently
// and checks it locally, before anything reaches the API server, and
// [IsBeingDeleted] tells an object whose deletion has begun.
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
//		Labels(map[string]string{"app.kubernetes.io/name": "web"}).
//		Annotations(map[string]string{"example.com/owner-team": "payments"}).
//		Finalizer("example.com/cleanup").
//		ControlledBy(app, r.Scheme)
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
// [Builder.Owner] and [Builder.ControlledBy] take the owner object and a
// runtime.Scheme that knows its type, as the owners package and
// controllerutil do: a typed object read through a client has an empty
// TypeMeta, and the scheme (the manager's) is the one source of its kind
// that cannot be mistyped. With a nil scheme the owner's TypeMeta is used
// (unstructured objects carry it); if that is empty too, the terminal
// methods say so.
//
// The rules are the owners package's (kopgo keeps them in one place): an
// owner must have a UID (it must exist on the server), must be in the
// object's namespace unless it is cluster-scoped, may not be the object
// itself, and at most one owner may be the controller: a second controller
// reference is an error naming both owners. The same owner (same group,
// kind and name; a re-created owner's new UID replaces the old) added twice
// is one reference, and adding an owner again never demotes its controller
// reference.
//
// # Reuse
//
// Results never share maps, slices or pointers with the Builder or with each
// other, so one Builder can produce metadata for many objects. Methods change
// the Builder they are called on; [Builder.Clone] branches a shared base:
//
//	base := kopmeta.GenerateName("job-").Namespace("batch").Labels(map[string]string{"team": "data"})
//	a, _ := base.Clone().Labels(map[string]string{"shard": "a"}).Build()
//	b, _ := base.Clone().Labels(map[string]string{"shard": "b"}).Build()
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
//   - name: a DNS-1123 subdomain by default; [Builder.NameRule] takes the
//     API server's function for other kinds (apivalidation.NameIsDNSLabel
//     for a Namespace, NameIsDNS1035Label for a Service, ...). The
//     generateName prefix follows the same rule, as a prefix. Name and
//     generateName may not both be empty.
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
//   - owner references: the rules of the Owners section above, and an
//     owner kind that may own (an Event may not).
//
// Only what the Builder contributes is checked: [Builder.ApplyTo] does not
// judge what an object already holds (it passed the server's checks, and may
// carry another controller's bare finalizer).
package meta
