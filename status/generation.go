package status

// IsCurrent reports whether obj's current generation (metadata.generation)
// was already handled: the controller reached a settled outcome for this
// spec, a success or a terminal failure, and needs to act again only when
// the spec changes (kuberator's observed-generation pattern: a reconciler
// may skip expensive work for a current object).
//
// Precisely, with g = metadata.generation:
//
//   - g == 0 (an object the API server has not stored, or a kind without
//     generation tracking): never current;
//   - obj implements [ObservedGenerationAccessor]: status.observedGeneration
//     == g, as [SetObservedGeneration] and [SetError] (on success or a
//     terminal error) leave it;
//   - otherwise: Ready=True or Stalled=True, observed at generation g.
//
// A retryable failure leaves obj not current, so it is retried even by a
// reconciler that skips current objects.
func IsCurrent(obj Getter) bool {
	gen := obj.GetGeneration()
	if gen == 0 {
		return false
	}
	if og, ok := obj.(ObservedGenerationAccessor); ok {
		return og.GetObservedGeneration() == gen
	}
	return IsTrue(obj, Ready) || IsTrue(obj, Stalled)
}

// SetObservedGeneration sets status.observedGeneration to obj's generation
// when obj implements [ObservedGenerationAccessor], and reports whether
// that changed anything. Call it when a generation reached a settled
// outcome ([SetError] does).
func SetObservedGeneration(obj Getter) bool {
	og, ok := obj.(ObservedGenerationAccessor)
	if !ok || og.GetObservedGeneration() == obj.GetGeneration() {
		return false
	}
	og.SetObservedGeneration(obj.GetGeneration())
	return true
}
