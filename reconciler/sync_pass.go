package reconciler

import (
	"cmp"
	"maps"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/apply"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// appliedChild is a child as an apply returned it.
type appliedChild struct {
	kind childKind
	res  apply.Result
}

// settled reports whether every desired child was written or found in
// place: nothing failed, was refused, held back or waits.
func (r *syncRun[T]) settled() bool {
	return len(r.errs) == 0 && len(r.refusals) == 0 && len(r.unwritten) == 0 && len(r.waits) == 0
}

// afterwards returns the children as they are after this run: those it
// observed, with the ones it applied as the API server returned them and
// without the ones it deleted, in the order of [Children] (kinds as
// declared, then namespace and name), and by ref.
func (r *syncRun[T]) afterwards(kinds []childKind) (Children, map[kopmeta.ObjectRef]client.Object) {
	byRef := maps.Clone(r.observed)
	for ref := range r.gone {
		delete(byRef, ref)
	}
	for ref, a := range r.applied {
		obj := newObject(r.env.Scheme, a.kind)
		if err := a.res.Into(obj); err == nil {
			byRef[ref] = obj
		}
		// Else unreadable as its kind (not for an object the API server
		// returned): the one observed stands, or none.
	}
	kindOf := func(ref kopmeta.ObjectRef) int {
		return slices.IndexFunc(kinds, func(k childKind) bool { return k.gvk.Group == ref.Group && k.gvk.Kind == ref.Kind })
	}
	refs := slices.SortedFunc(maps.Keys(byRef), func(a, b kopmeta.ObjectRef) int {
		return cmp.Or(cmp.Compare(kindOf(a), kindOf(b)), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	out := make(Children, len(refs))
	for i, ref := range refs {
		out[i] = byRef[ref]
	}
	return out, byRef
}

// follow makes r, a second pass, report the first's changes too: the one
// event of the reconcile names everything it changed.
func (r *syncRun[T]) follow(first *syncRun[T]) {
	for _, v := range verbs {
		r.changes[v] = append(first.changes[v], r.changes[v]...)
	}
}
