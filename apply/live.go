package apply

import (
	"encoding/base64"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// builtinTypes converts the Kubernetes API's own kinds to structured-merge-
// diff values with the schema client-go's apply configurations are generated
// from: the one the API server of the same release merges with (list-map
// keys, atomic lists and maps, key defaults such as a port's protocol).
// Kinds outside client-go's scheme (custom resources) have no schema here.
// Parsing the schema takes a moment and a few MB of heap, so it is done on
// the first use.
var builtinTypes = sync.OnceValue(func() managedfields.TypeConverter {
	return applyconfigurations.NewTypeConverter(clientgoscheme.Scheme)
})

// unmanagedFields are the fields the API server never records in
// managedFields (k8s.io/apimachinery's stripMetaManager): an intent's field
// set lacks them too before it is compared with a manager's entry.
var unmanagedFields = fieldpath.NewSet(
	fieldpath.MakePathOrDie("apiVersion"),
	fieldpath.MakePathOrDie("kind"),
	fieldpath.MakePathOrDie("metadata"),
	fieldpath.MakePathOrDie("metadata", "name"),
	fieldpath.MakePathOrDie("metadata", "namespace"),
	fieldpath.MakePathOrDie("metadata", "creationTimestamp"),
	fieldpath.MakePathOrDie("metadata", "selfLink"),
	fieldpath.MakePathOrDie("metadata", "uid"),
	fieldpath.MakePathOrDie("metadata", "clusterName"),
	fieldpath.MakePathOrDie("metadata", "generation"),
	fieldpath.MakePathOrDie("metadata", "managedFields"),
	fieldpath.MakePathOrDie("metadata", "resourceVersion"),
)

// liveHolds reports whether applying intent as fieldOwner to the object
// live (the cache's copy) would change nothing, judged from live alone. An
// apply writes nothing when
//
//   - the fields fieldOwner's Apply entry in live's managedFields owns,
//     recorded at the intent's apiVersion, are exactly the intent's fields
//     (a field the intent no longer sets is removed by the apply; an entry
//     at another apiVersion is rewritten at the intent's), and
//   - live holds the intent's value in every one of them, lists in the
//     intent's order (the merge puts them in that order).
//
// It answers false whenever it cannot tell: no such entry (managedFields
// stripped by a cache transform, or another field owner), a kind without a
// schema here (custom resources), an intent that does not fit the schema or
// carries preconditions (resourceVersion, uid). False costs one apply, which
// the server turns into a no-op when nothing changes.
func liveHolds(intent *unstructured.Unstructured, live client.Object, fieldOwner string) bool {
	entry, ok := applyEntry(live.GetManagedFields(), fieldOwner, intent.GetAPIVersion())
	if !ok || entry.FieldsV1 == nil {
		return false
	}
	if md, ok := intent.Object["metadata"].(map[string]any); ok && (md["resourceVersion"] != nil || md["uid"] != nil) {
		return false
	}
	types := builtinTypes()
	want, err := types.ObjectToTyped(intent)
	if err != nil {
		return false
	}
	fields, err := want.ToFieldSet()
	if err != nil {
		return false
	}
	fields = fields.Difference(unmanagedFields)
	owned := &fieldpath.Set{}
	if err := owned.FromJSON(entry.FieldsV1.GetRawReader()); err != nil || !owned.Equals(fields) {
		return false
	}
	// live's type converter looks its kind up from its TypeMeta, which a
	// typed object read from a cache may lack.
	if live.GetObjectKind().GroupVersionKind().Empty() {
		live = live.DeepCopyObject().(client.Object)
		live.GetObjectKind().SetGroupVersionKind(intent.GroupVersionKind())
	}
	live = withStringData(intent, live)
	got, err := types.ObjectToTyped(live)
	if err != nil {
		return false
	}
	leaves := fields.Leaves()
	return value.Equals(got.ExtractItems(leaves).AsValue(), want.ExtractItems(leaves).AsValue())
}

// ownFields fingerprints the set of fields that fieldOwner's Apply entry in
// obj's managedFields owns, when the entry was recorded at apiVersion: a
// hash of the entry's fieldsV1 as the cache holds it. The Applier compares
// fingerprints taken from the same cache (an object of a kind is read in
// one form), where the API server's encoding of a set is stable: the bytes
// of an unchanged set stay the same, and the server sends what it stored.
//
// Server-side apply moves a field's ownership to whoever changes its value
// (an update, or an apply with force), so an unchanged set proves that no
// one else changed a value in it since our apply, whatever defaults the
// server filled in: that is what [Applier.unchanged]'s ownership proof
// uses.
func ownFields(obj client.Object, fieldOwner, apiVersion string) (digest, bool) {
	entry, ok := applyEntry(obj.GetManagedFields(), fieldOwner, apiVersion)
	raw := entry.FieldsV1.GetRawBytes()
	if !ok || len(raw) == 0 {
		return digest{}, false
	}
	return digestOf(raw), true
}

// applyEntry returns fieldOwner's Apply entry for the main resource, when it
// was recorded at apiVersion.
func applyEntry(entries []metav1.ManagedFieldsEntry, fieldOwner, apiVersion string) (metav1.ManagedFieldsEntry, bool) {
	for _, e := range entries {
		if e.Manager == fieldOwner && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" {
			return e, e.APIVersion == apiVersion
		}
	}
	return metav1.ManagedFieldsEntry{}, false
}

// withStringData returns live with the Secret's write-only stringData
// filled in from its data, for the keys the intent sets in stringData: the
// server records the applied stringData in managedFields but stores the
// values in data, so without this an unchanged Secret authored with
// stringData would never compare equal. Other objects are returned as
// they are.
func withStringData(intent *unstructured.Unstructured, live client.Object) client.Object {
	if intent.GetAPIVersion() != "v1" || intent.GetKind() != "Secret" {
		return live
	}
	want, ok := intent.Object["stringData"].(map[string]any)
	if !ok || len(want) == 0 {
		return live
	}
	switch l := live.(type) {
	case *corev1.Secret:
		c := l.DeepCopy()
		c.StringData = map[string]string{}
		for k := range want {
			if v, ok := l.Data[k]; ok {
				c.StringData[k] = string(v)
			}
		}
		return c
	case *unstructured.Unstructured:
		c := l.DeepCopy()
		data, _ := c.Object["data"].(map[string]any)
		sd := map[string]any{}
		for k := range want {
			enc, ok := data[k].(string)
			if !ok {
				continue
			}
			if v, err := base64.StdEncoding.DecodeString(enc); err == nil {
				sd[k] = string(v)
			}
		}
		c.Object["stringData"] = sd
		return c
	}
	return live
}
