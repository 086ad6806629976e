package apply

import (
	"fmt"
	"sync"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/scope"
)

// validate catches locally what the server would reject or misread, so that
// no request is sent for it. The errors name the field at fault; their Kind
// is Invalid, except when the RESTMapper could not ask the server (then the
// mapper's own Kind, such as Unavailable).
func (a *Applier) validate(in *intent, o *client.ApplyOptions) error {
	if err := checkIntent(in, o); err != nil {
		return err
	}
	gvk := in.gvk
	if a.scopes.fits(gvk, in.namespace) {
		return nil
	}
	s := scope.Cluster
	if in.namespace != "" {
		s = scope.Namespaced(in.namespace)
	}
	err := s.Check(a.mapper, gvk)
	switch {
	case err == nil:
		a.scopes.learn(gvk, in.namespace != "")
		return nil
	case apimeta.IsNoMatchError(err):
		return koperrors.WrapKind(koperrors.Invalid, fmt.Errorf("apiVersion/kind: %s is not served by the API server: %w", gvk, err), "", kopmeta.ObjectRef{})
	case koperrors.KindOf(err) == koperrors.Invalid && in.namespace == "":
		return koperrors.WrapKind(koperrors.Invalid, fmt.Errorf("metadata.namespace is required: %s is namespaced (%w)", gvk.Kind, err), "", kopmeta.ObjectRef{})
	case koperrors.KindOf(err) == koperrors.Invalid:
		return koperrors.WrapKind(koperrors.Invalid, fmt.Errorf("metadata.namespace %q must be empty: %s is cluster-scoped (%w)", in.namespace, gvk.Kind, err), "", kopmeta.ObjectRef{})
	default:
		return err
	}
}

// checkIntent is what [Applier.validate] and [Fake] check without a
// RESTMapper: a field owner, an apiVersion and kind, and a name.
func checkIntent(in *intent, o *client.ApplyOptions) error {
	gvk := in.gvk
	switch {
	case o.FieldManager == "":
		return koperrors.Errorf(koperrors.Invalid, "field owner is empty: every apply names its field manager")
	case gvk.Kind == "" || gvk.Version == "":
		return koperrors.Errorf(koperrors.Invalid, "apiVersion and kind are required (got apiVersion %q, kind %q)", gvk.GroupVersion().String(), gvk.Kind)
	case in.name == "":
		return koperrors.Errorf(koperrors.Invalid, "metadata.name is required (server-side apply cannot use generateName)")
	}
	return nil
}

// scopes remembers, per kind, whether it is namespaced, as the RESTMapper
// said once: a mapper lookup per apply costs more than the rest of an apply
// the cache proves unchanged (controller-runtime's allocates an error on
// each). Only answers are remembered, never a failed lookup, so a kind
// installed later is found then.
type scopes struct {
	mu         sync.RWMutex
	namespaced map[schema.GroupVersionKind]bool
}

// fits reports whether the kind is known to be namespaced exactly when
// namespace is set.
func (s *scopes) fits(gvk schema.GroupVersionKind, namespace string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	namespaced, ok := s.namespaced[gvk]
	return ok && namespaced == (namespace != "")
}

func (s *scopes) learn(gvk schema.GroupVersionKind, namespaced bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.namespaced == nil {
		s.namespaced = map[schema.GroupVersionKind]bool{}
	}
	s.namespaced[gvk] = namespaced
}
