package loop

import "sigs.k8s.io/controller-runtime/pkg/client"

// Kept returns the number of entries in each per-object map the loop
// keeps, for the churn test.
func Kept[T client.Object](l *Loop[T]) map[string]int {
	l.mu.Lock()
	abandoned, finalized, lastState := len(l.abandoned), len(l.finalized), len(l.lastState)
	l.mu.Unlock()
	l.cleaned.mu.Lock()
	cleaned := len(l.cleaned.cur) + len(l.cleaned.prev)
	l.cleaned.mu.Unlock()
	return map[string]int{
		"objects": l.objs.size(), "echoes": l.echoes.size(), "rate limiter": l.limiter.size(),
		"abandoned": abandoned, "finalized": finalized, "last states": lastState, "cleaned": cleaned,
	}
}
