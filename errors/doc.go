// Package errors is kopgo's error type: one error that says what went wrong
// (a [Kind] from a closed set), during which operation, on which object, and
// why (the cause, through Unwrap). It also carries the two markers the
// reconcile loop understands, [Terminal] and [RequeueAfter].
//
// Import it as koperrors; kopgo's own code does:
//
//	import koperrors "github.com/kopgo/kopgo/errors"
//
// It re-exports the standard library's [New], [Is], [As], [AsType], [Unwrap],
// [Join] and [ErrUnsupported], so a file may import it in place of "errors".
//
// # Kinds
//
// [KindOf] classifies any error: the Kind of an [*Error] in its chain, or else
// a table of API-server statuses and Go errors (documented on KindOf): a 409
// is [Conflict], a refused connection [Unavailable], a missing kubeconfig
// [Config]. The set of kinds is closed, so Kind.String is safe as a metric
// label. The IsX helpers ([IsNotFound], [IsConflict], ...) test the Kind, so
// they see through wrapping with %w and through kopgo's markers.
//
//	if err := c.Get(ctx, key, &cm); koperrors.IsNotFound(err) { ... }
//
// # Naming the object
//
// [Wrap] turns a cause into an [*Error] for an operation on an object:
//
//	return koperrors.Wrap(err, "apply", koperrors.ObjectOf(deploy))
//	// apply Deployment default/web: the server rejected ...
//
// # Markers for the reconcile loop
//
// [Terminal] says that retrying cannot help: the loop stops retrying the
// object until it changes and reports Stalled=True. [RequeueAfter] sets the
// next attempt's delay; with a nil cause it is a plain "come back later" that
// is neither logged nor counted as an error ([IsRequeueOnly]). Both keep the
// cause reachable, so KindOf and errors.Is still work on a marked error.
//
//	if spec.Port > 65535 {
//		return koperrors.Terminal(fmt.Errorf("spec.port %d: must be at most 65535", spec.Port))
//	}
//	return koperrors.RequeueAfter(nil, 30*time.Second)
package errors
