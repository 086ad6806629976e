package reconciler

import (
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/owners"
)

// setup resolves the declared kinds and the owner label key, refusing what
// cannot work.
func (s *Syncer[T]) setup(parent T, env *Env) (*syncSetup, error) {
	if s.fn == nil {
		return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config, "sync function is nil"))
	}
	if env == nil || env.Client == nil || env.Scheme == nil || env.Applier == nil {
		return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config,
			"env needs a client, a scheme and an applier"))
	}
	if parent.GetUID() == "" {
		return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Invalid, "parent has no UID: it must be read from the API server"))
	}
	rk, err := s.resolveKinds(parent, env)
	if err != nil {
		return nil, err
	}
	su := &syncSetup{resolvedKinds: rk, parentGVK: rk.typedParentGVK}
	if su.parentGVK.Empty() {
		// An unstructured parent says its kind.
		if su.parentGVK, err = apiutil.GVKForObject(parent, env.Scheme); err != nil {
			return nil, koperrors.Terminal(koperrors.WrapKind(koperrors.Config, err, "parent kind", kopmeta.ObjectRef{}))
		}
	}
	su.labelKey = s.ownerLabel(su.parentGVK)
	if _, err := owners.OwnerLabel(su.labelKey, parent); err != nil {
		return nil, koperrors.Terminal(err)
	}
	return su, nil
}

// ChildKinds returns the declared child kinds, one example object each (as
// given to [Sync], without [Child]'s wrapper): the controller Builder
// watches them (Owns) so that a change to a child reconciles its parent.
// The slice is a copy.
func (s *Syncer[T]) ChildKinds() []client.Object { return slices.Clone(s.kinds) }

// resolveKinds maps the declared child kinds to GVKs and scopes, refusing
// what a parent of this scope cannot own. The kinds are looked up once per
// Env (see the Syncer's resolved field); the slice returned is shared,
// read only.
func (s *Syncer[T]) resolveKinds(parent T, env *Env) (*resolvedKinds, error) {
	rk := s.resolved.Load()
	if rk == nil || rk.env != env {
		var err error
		if rk, err = s.lookUpKinds(parent, env); err != nil {
			return nil, err
		}
		s.resolved.Store(rk)
	}
	if parent.GetNamespace() != "" {
		for _, k := range rk.kinds {
			if !k.namespaced {
				return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config,
					"child kind %s is cluster-scoped: a namespaced parent cannot own it (the garbage collector never resolves such a reference)", k.gvk.GroupKind()))
			}
		}
	}
	return rk, nil
}

// lookUpKinds resolves the declared kinds against env's scheme and REST
// mapper, and a typed parent's kind against env's scheme.
func (s *Syncer[T]) lookUpKinds(parent T, env *Env) (*resolvedKinds, error) {
	if len(s.kinds) == 0 {
		return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config, "no child kinds declared"))
	}
	kinds := make([]childKind, 0, len(s.kinds))
	seen := map[schema.GroupKind]bool{}
	for i, ex := range s.kinds {
		if ex == nil {
			return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config, "a declared child kind is nil"))
		}
		defaults := s.kindOpts[i]
		gvk, err := apiutil.GVKForObject(ex, env.Scheme)
		if err != nil || gvk.Kind == "" {
			return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config, "child kind %T: not in the scheme (or, unstructured, without apiVersion and kind): %v", ex, err))
		}
		if seen[gvk.GroupKind()] {
			return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config, "child kind %s declared twice", gvk.GroupKind()))
		}
		seen[gvk.GroupKind()] = true
		if len(defaults.DependsOn) > 0 {
			return nil, koperrors.Terminal(koperrors.Errorf(koperrors.Config,
				"child kind %s: DependsOn names children, not kinds: wrap the desired child with it", gvk.GroupKind()))
		}
		namespaced, err := env.Client.IsObjectNamespaced(ex)
		if err != nil {
			// An unknown kind is Invalid (not served); a discovery failure
			// keeps its own kind and is retried.
			return nil, koperrors.Wrap(err, "resolve child kind", kopmeta.ObjectRef{Group: gvk.Group, Kind: gvk.Kind})
		}
		kinds = append(kinds, childKind{gvk: gvk, example: ex, namespaced: namespaced, defaults: defaults})
	}
	rk := &resolvedKinds{env: env, kinds: kinds, byType: map[reflect.Type]childKind{}}
	for _, k := range kinds {
		if _, isU := k.example.(runtime.Unstructured); !isU {
			rk.byType[reflect.TypeOf(k.example)] = k
		}
	}
	if _, isU := any(parent).(runtime.Unstructured); !isU {
		gvk, err := apiutil.GVKForObject(parent, env.Scheme)
		if err != nil {
			return nil, koperrors.Terminal(koperrors.WrapKind(koperrors.Config, err, "parent kind", kopmeta.ObjectRef{}))
		}
		rk.typedParentGVK = gvk
	}
	return rk, nil
}

// ownerLabel returns the owner label key: the option, or one derived from
// the parent's group and kind.
func (s *Syncer[T]) ownerLabel(parent schema.GroupVersionKind) string {
	if s.opts.OwnerLabel != "" {
		return s.opts.OwnerLabel
	}
	group := parent.Group
	if group == "" {
		group = "sync.kopgo.dev"
	}
	return group + "/" + strings.ToLower(parent.Kind)
}
