// Package meta builds object metadata fluently and checks it before anything
// reaches the API server.
//
// Import it as kopmeta, since apimachinery has a meta package too; kopgo's own
// code does:
//
//	import kopmeta "github.com/kopgo/kopgo/meta"
//
// # Usage
//
//	om, err := kopmeta.New("web").
//		Namespace("shop").
//		Label("app.kubernetes.io/name", "web").
//		Annotation("example.com/owner-team", "payments").
//		Finalizer("example.com/cleanup").
//		ControlledBy(webapp, examplev1.GroupVersion.WithKind("WebApp")).
//		Build()
//
// The same Builder gives the server-side apply form with
// [Builder.ApplyConfiguration] (only the fields that were set, so an apply
// owns nothing else), or writes onto an existing object with
// [Builder.ApplyTo], merging rather than replacing.
//
// # Validation
//
// Build, ApplyConfiguration and ApplyTo check everything the API server would
// reject, and report all of it at once as a [*ValidationError] whose entries
// name the field path and the value:
//
//	invalid metadata: metadata.labels: Invalid value: "-web": ...; metadata.name: Invalid value: "Web": ...
//
// Names are DNS-1123 subdomains unless [Builder.NameRule] asks for DNS-1123
// labels (Services, Namespaces). Finalizers must be domain-qualified
// ("example.com/cleanup"): the API server only warns about a bare word, but
// two controllers that pick the same word remove each other's finalizer.
// Owner references need apiVersion, kind, name and uid; a second controller
// reference is an error naming both owners.
package meta
