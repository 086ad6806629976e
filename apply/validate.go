package apply

import (
	"fmt"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/scope"
)

// validate catches locally what the server would reject or misread, so that
// no request is sent for it. The errors name the field at fault; their Kind
// is Invalid, except when the RESTMapper could not ask the server (then the
// mapper's own Kind, such as Unavailable).
func (a *Applier) validate(u *unstructured.Unstructured, o ApplyOptions) error {
	gvk := u.GroupVersionKind()
	switch {
	case o.FieldOwner == "":
		return koperrors.Errorf(koperrors.Invalid, "field owner is empty: every apply names its field manager")
	case gvk.Kind == "" || gvk.Version == "":
		return koperrors.Errorf(koperrors.Invalid, "apiVersion and kind are required (got apiVersion %q, kind %q)", u.GetAPIVersion(), u.GetKind())
	case u.GetName() == "":
		return koperrors.Errorf(koperrors.Invalid, "metadata.name is required (server-side apply cannot use generateName)")
	}
	err := scope.Of(u).Check(a.mapper, gvk)
	switch {
	case err == nil:
		return nil
	case apimeta.IsNoMatchError(err):
		return koperrors.WrapKind(koperrors.Invalid, fmt.Errorf("apiVersion/kind: %s is not served by the API server: %w", gvk, err), "", koperrors.Object{})
	case koperrors.IsInvalid(err) && u.GetNamespace() == "":
		return koperrors.WrapKind(koperrors.Invalid, fmt.Errorf("metadata.namespace is required: %s is namespaced (%w)", gvk.Kind, err), "", koperrors.Object{})
	case koperrors.IsInvalid(err):
		return koperrors.WrapKind(koperrors.Invalid, fmt.Errorf("metadata.namespace %q must be empty: %s is cluster-scoped (%w)", u.GetNamespace(), gvk.Kind, err), "", koperrors.Object{})
	default:
		return err
	}
}
