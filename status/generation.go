package status

// IsCurrent reports whether obj's current generation was already handled:
// status.observedGeneration equals metadata.generation when the object has
// that field ([ObservedGenerationAccessor]), otherwise the Ready condition
// was observed at this generation. A reconciler can skip work for a current
// object whose children are in place (kuberator's observed-generation
// pattern); a generation of 0 (no generation tracking) is never current.
func IsCurrent(obj Getter) bool {
	gen := obj.GetGeneration()
	if gen == 0 {
		return false
	}
	if og, ok := obj.(ObservedGenerationAccessor); ok {
		return og.GetObservedGeneration() == gen
	}
	c := Get(obj, Ready)
	return c != nil && c.ObservedGeneration == gen
}

// SetObservedGeneration records that obj's current generation was handled,
// when obj has status.observedGeneration, and reports whether it changed.
func SetObservedGeneration(obj Getter) bool {
	og, ok := obj.(ObservedGenerationAccessor)
	if !ok || og.GetObservedGeneration() == obj.GetGeneration() {
		return false
	}
	og.SetObservedGeneration(obj.GetGeneration())
	return true
}
