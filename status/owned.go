package status

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// ownedTypes are the condition types kopgo owns on an object whose status
// it writes with them: they are kopgo's whoever wrote them last (see
// "Conditions kopgo owns" in the package documentation).
var ownedTypes = [...]string{Ready, Reconciling, Stalled}

func isOwnedType(t string) bool { return slices.Contains(ownedTypes[:], t) }

// conditionTypes returns the types of the conditions in a status as
// JSON-shaped data, in their order; "" for an entry without one.
func conditionTypes(st any) []string {
	m, ok := st.(map[string]any)
	if !ok {
		return nil
	}
	list, _ := m["conditions"].([]any)
	out := make([]string, len(list))
	for i, item := range list {
		if c, ok := item.(map[string]any); ok {
			out[i], _ = c["type"].(string)
		}
	}
	return out
}

// maintainsOwned reports whether a status as sent carries any of the
// condition types kopgo owns: only then does a write take the others
// over. A Patcher used for a status without kopgo's conditions leaves
// every condition alone.
func maintainsOwned(sent any) bool {
	return slices.ContainsFunc(conditionTypes(sent), isOwnedType)
}

// unwanted returns the types kopgo owns that stored holds and sent does
// not: after an apply of sent, such an entry is still there only because
// another field manager owns (part of) it.
func unwanted(stored, sent any) []string {
	want := conditionTypes(sent)
	var out []string
	for _, t := range conditionTypes(stored) {
		if isOwnedType(t) && !slices.Contains(want, t) && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// removalPatch is a JSON patch that removes the conditions of types drop
// from a status whose condition types are stored, each removal guarded by
// a test that the entry at its index is still of that type (another
// writer in between shifts or removes entries: the patch then fails and
// changes nothing). Entries go from the last, so that each index holds
// when its removal comes. Nil when there is nothing to remove.
func removalPatch(stored []string, drop []string) []byte {
	type op struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value,omitempty"`
	}
	var ops []op
	for i, typ := range slices.Backward(stored) {
		if !slices.Contains(drop, typ) {
			continue
		}
		path := fmt.Sprintf("/status/conditions/%d", i)
		ops = append(ops, op{Op: "test", Path: path + "/type", Value: typ}, op{Op: "remove", Path: path})
	}
	if len(ops) == 0 {
		return nil
	}
	data, _ := json.Marshal(ops) // strings and ints only: cannot fail
	return data
}

// removeConditions sends the JSON patch that removes the conditions of
// types drop from the status subresource of the object gvk/obj, as stored
// with condition types stored, and returns the object as the server
// returned it. A failed guard (the conditions changed in between) is an
// error of Kind Conflict: read again and retry.
func removeConditions(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, obj client.Object, stored, drop []string, opts ...client.SubResourcePatchOption) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetName(obj.GetName())
	u.SetNamespace(obj.GetNamespace())
	patch := removalPatch(stored, drop)
	if patch == nil {
		return nil, nil
	}
	o := kopmeta.RefOf(obj)
	if err := c.Status().Patch(ctx, u, client.RawPatch(types.JSONPatchType, patch), opts...); err != nil {
		if apierrors.IsInvalid(err) {
			// The API server answers a failed JSON patch test with a
			// 422 naming no field: the entries moved; not a verdict.
			return nil, koperrors.WrapKind(koperrors.Conflict, err, "remove conditions "+fmt.Sprint(drop)+" another field manager wrote in the status of", o)
		}
		return nil, koperrors.Wrap(err, "remove conditions "+fmt.Sprint(drop)+" another field manager wrote in the status of", o)
	}
	return u, nil
}
