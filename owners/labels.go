package owners

import (
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/internal/names"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// SetOwnerLabel labels child with owner's name under the label key, the
// link [LabelMapper] follows back. The key should be the operator's own
// ("example.com/webapp"): a key shared by two operators would make each
// reconcile the other's objects.
//
// It refuses, with an error of Kind Invalid and child unchanged, a key that
// is not a qualified name and an owner name that is not a valid label value
// (longer than 63 characters, for one). It does not check namespaces: the
// mapper's [OwnerScope] says where owners live.
func SetOwnerLabel(child client.Object, key string, owner client.Object) error {
	l, err := OwnerLabel(key, owner)
	if err != nil {
		return koperrors.WrapKind(koperrors.Invalid, err, "set owner label", kopmeta.RefOf(child))
	}
	labels := maps.Clone(child.GetLabels())
	if labels == nil {
		labels = make(map[string]string, 1)
	}
	maps.Copy(labels, l)
	child.SetLabels(labels)
	return nil
}

// OwnerLabel returns the label that names owner under key, for an apply
// configuration's WithLabels:
//
//	lbl, err := owners.OwnerLabel("example.com/webapp", webapp)
//	secret := corev1ac.Secret(name, ns).WithLabels(lbl)
//
// Errors are those of [SetOwnerLabel].
func OwnerLabel(key string, owner client.Object) (map[string]string, error) {
	// The checks without regular expressions first: Sync calls this on
	// every reconcile.
	if !names.QualifiedName(key) {
		if msgs := validation.IsQualifiedName(key); len(msgs) > 0 {
			return nil, koperrors.Errorf(koperrors.Invalid, "owner label key %q: %s", key, strings.Join(msgs, "; "))
		}
	}
	if !names.LabelValue(owner.GetName()) {
		if msgs := validation.IsValidLabelValue(owner.GetName()); len(msgs) > 0 {
			return nil, koperrors.Errorf(koperrors.Invalid, "owner %s cannot be named in label %s: %s",
				kopmeta.RefOf(owner), key, strings.Join(msgs, "; "))
		}
	}
	if owner.GetName() == "" {
		return nil, koperrors.Errorf(koperrors.Invalid, "owner %s has no name to put in label %s", kopmeta.RefOf(owner), key)
	}
	return map[string]string{key: owner.GetName()}, nil
}
