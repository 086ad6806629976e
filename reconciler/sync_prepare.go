package reconciler

import (
	"cmp"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/internal/ownerref"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/scope"
)

// preparedChild is a desired child ready to apply.
type preparedChild struct {
	obj  client.Object
	ref  kopmeta.ObjectRef
	kind childKind
	opts ChildOptions
	deps []kopmeta.ObjectRef
}

// prepare checks the desired children and returns copies carrying the
// controller reference and the owner label, in dependency order. Nothing is
// applied unless every child passes.
func (s *Syncer[T]) prepare(parent T, scheme *runtime.Scheme, su *syncSetup, desired []client.Object) ([]preparedChild, error) {
	kinds := su.kinds
	byGK := make(map[schema.GroupKind]childKind, len(kinds))
	for _, k := range kinds {
		byGK[k.gvk.GroupKind()] = k
	}
	// The controller reference every child gets, built once.
	ctrlRef := ownerref.For(parent, su.parentGVK, true)
	seen := sets.New[kopmeta.ObjectRef]()
	out := make([]preparedChild, 0, len(desired))
	for i, d := range desired {
		d, opts := unwrapChild(d)
		if d == nil {
			return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config, "desired child %d is nil", i))
		}
		child := d.DeepCopyObject().(client.Object)
		gvk, err := su.kindOf(child, scheme)
		if err != nil || gvk.Kind == "" {
			return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config, "desired child %d (%T %s): kind not in the scheme: %v", i, d, d.GetName(), err))
		}
		name := kopmeta.ObjectRef{Group: gvk.Group, Kind: gvk.Kind, Namespace: child.GetNamespace(), Name: child.GetName()}
		k, ok := byGK[gvk.GroupKind()]
		if !ok {
			declared := make([]string, 0, len(kinds))
			for _, k := range kinds {
				declared = append(declared, k.gvk.GroupKind().String())
			}
			return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config,
				"desired child %s: kind %s is not among the declared child kinds (%s); add it to Sync's childKinds",
				name, gvk.GroupKind(), strings.Join(declared, ", ")))
		}
		if child.GetName() == "" {
			return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Invalid, "desired child %d of kind %s has no name", i, gvk.Kind))
		}
		if err := checkNamespace(parent, child, k, name); err != nil {
			return nil, err
		}
		name.Namespace = child.GetNamespace()
		ref := refFor(gvk, child.GetNamespace(), child.GetName())
		if seen.Has(ref) {
			return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config, "desired child %s is returned twice", name))
		}
		seen.Insert(ref)
		// The label's key and value were checked once for this reconcile
		// (setup); child is our copy, its labels ours to change.
		labels := child.GetLabels()
		if labels == nil {
			labels = make(map[string]string, 1)
		}
		labels[su.labelKey] = parent.GetName()
		child.SetLabels(labels)
		// What owners.SetController checks and does, with the reference
		// built once.
		if err := ownerref.Attach(child, ctrlRef, parent.GetNamespace()); err != nil {
			return nil, koperrors.Terminal(koperrors.WrapKind(koperrors.Invalid, err, "set controller", kopmeta.RefOf(child)))
		}
		opts = opts.over(k.defaults)
		if opts.Update == RunOnceStrategy {
			setRunKey(child, runKey(parent, opts))
		}
		out = append(out, preparedChild{obj: child, ref: ref, kind: k, opts: opts})
	}
	if err := resolveDependencies(parent, scheme, byGK, out, seen); err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(out, func(c preparedChild) bool { return len(c.deps) > 0 }) {
		return out, nil // the sync function's order
	}
	return dependencyOrder(out)
}

// resolveDependencies turns each child's DependsOn objects into refs of
// other desired children (want: the refs of all of them). A child in a namespace that is itself a desired
// child depends on that Namespace without saying so: it is not written
// until the Namespace is the parent's and ready, so never into a namespace
// someone else holds or one being deleted.
func resolveDependencies(parent client.Object, scheme *runtime.Scheme, byGK map[schema.GroupKind]childKind, children []preparedChild, want sets.Set[kopmeta.ObjectRef]) error {
	for i := range children {
		c := &children[i]
		if ns := namespaceRef(c.ref.Namespace); c.ref.Namespace != "" && want.Has(ns) {
			c.deps = append(c.deps, ns)
		}
		for _, d := range c.opts.DependsOn {
			d, _ := unwrapChild(d)
			if d == nil {
				return koperrors.Terminal(koperrors.Errorf(koperrors.Config, "desired child %s depends on nil", c.ref))
			}
			gvk, err := apiutil.GVKForObject(d, scheme)
			if err != nil || gvk.Kind == "" {
				return koperrors.Terminal(koperrors.Errorf(koperrors.Config, "desired child %s depends on a %T: kind not in the scheme: %v", c.ref, d, err))
			}
			ns := d.GetNamespace()
			if k, ok := byGK[gvk.GroupKind()]; ok && k.namespaced && ns == "" {
				ns = parent.GetNamespace()
			}
			dep := refFor(gvk, ns, d.GetName())
			switch {
			case dep == c.ref:
				return koperrors.Terminal(koperrors.Errorf(koperrors.Config, "desired child %s depends on itself", c.ref))
			case !want.Has(dep):
				return koperrors.Terminal(koperrors.Errorf(koperrors.Config,
					"desired child %s depends on %s, which is not a desired child: DependsOn names children the sync function returns", c.ref, dep))
			}
			if !slices.Contains(c.deps, dep) {
				c.deps = append(c.deps, dep)
			}
		}
	}
	return nil
}

// namespaceRef is the ref of the Namespace named ns.
func namespaceRef(ns string) kopmeta.ObjectRef { return kopmeta.ObjectRef{Kind: "Namespace", Name: ns} }

// dependencyOrder orders children so that each comes after the children it
// depends on, keeping the sync function's order otherwise; a cycle is a
// Terminal Config error naming it.
func dependencyOrder(children []preparedChild) ([]preparedChild, error) {
	const (
		unvisited = iota
		visiting
		done
	)
	state := make(map[kopmeta.ObjectRef]int, len(children))
	index := make(map[kopmeta.ObjectRef]int, len(children))
	for i, c := range children {
		index[c.ref] = i
	}
	out := make([]preparedChild, 0, len(children))
	var path []kopmeta.ObjectRef
	var visit func(i int) error
	visit = func(i int) error {
		c := children[i]
		switch state[c.ref] {
		case done:
			return nil
		case visiting:
			at := slices.Index(path, c.ref)
			cycle := make([]string, 0, len(path)-at+1)
			for _, r := range append(path[at:], c.ref) {
				cycle = append(cycle, r.String())
			}
			return koperrors.Terminal(koperrors.Errorf(koperrors.Config, "desired children depend on each other in a cycle: %s", strings.Join(cycle, " -> ")))
		}
		state[c.ref] = visiting
		path = append(path, c.ref)
		for _, d := range c.deps {
			if err := visit(index[d]); err != nil {
				return err
			}
		}
		path = path[:len(path)-1]
		state[c.ref] = done
		out = append(out, c)
		return nil
	}
	for i := range children {
		if err := visit(i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkNamespace defaults and checks a desired child's namespace against its
// kind's scope and its parent's namespace, with scope's rules.
func checkNamespace(parent, child client.Object, k childKind, name kopmeta.ObjectRef) error {
	s := scope.Cluster
	if k.namespaced {
		// The parent's namespace; the child's own under a cluster-scoped parent.
		s = scope.AllNamespaces
		if ns := cmp.Or(parent.GetNamespace(), child.GetNamespace()); ns != "" {
			s = scope.Namespaced(ns)
		}
	}
	if err := s.ApplyTo(child); err != nil {
		return koperrors.Terminal(koperrors.Wrap(err, "desired child", name))
	}
	return nil
}

// RunOnceAnnotation is the annotation that carries a [RunOnce] child's run
// key, so that Sync can tell the run the existing child belongs to.
const RunOnceAnnotation = "kopgo.dev/run-once"

// runKey is the run key of a RunOnce child of parent: its own, or the
// parent's generation.
func runKey(parent client.Object, opts ChildOptions) string {
	if opts.RunKey != "" {
		return opts.RunKey
	}
	return fmt.Sprint(parent.GetGeneration())
}

// setRunKey puts key in obj's run-once annotation.
func setRunKey(obj client.Object, key string) {
	a := maps.Clone(obj.GetAnnotations())
	if a == nil {
		a = map[string]string{}
	}
	a[RunOnceAnnotation] = key
	obj.SetAnnotations(a)
}

// kindOf is a desired child's kind: a declared typed kind's by its Go
// type, else the scheme's answer (an unstructured child says its own).
func (su *syncSetup) kindOf(child client.Object, scheme *runtime.Scheme) (schema.GroupVersionKind, error) {
	if k, ok := su.byType[reflect.TypeOf(child)]; ok {
		return k.gvk, nil
	}
	return apiutil.GVKForObject(child, scheme)
}
