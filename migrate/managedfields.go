package migrate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Rename is a field that a version calls by another name than the storage
// version does: managedFields entries of Version that own From are
// rewritten to own To. Paths are the fields' names from the object's root,
// joined by dots ("spec.size"); list items and map keys below them move
// with them.
type Rename struct {
	// Version is the version that has the field at From.
	Version string
	// From is the field's path in Version, such as "spec.size".
	From string
	// To is the field's path in the storage version, such as "spec.replicas".
	To string
}

// RewriteManagedFields returns entries with every entry that names a
// version of group other than storage (apiVersion group/version) rewritten
// to name group/storage: its fields renamed as renames say, then merged
// into an Update entry of the same manager and subresource that already
// names the storage version, if there is one (the API server refuses two
// entries with the same manager, operation, subresource and, for updates,
// version). It reports whether anything changed. Entries of other groups
// (there are none on a custom resource) are kept as they are.
//
// An error names the entry and the field that cannot be read, such as
// `metadata.managedFields[2].fieldsV1: ...`.
func RewriteManagedFields(entries []metav1.ManagedFieldsEntry, group, storage string, renames []Rename) ([]metav1.ManagedFieldsEntry, bool, error) {
	target := group + "/" + storage
	changed := false
	out := make([]metav1.ManagedFieldsEntry, 0, len(entries))
	for i, e := range entries {
		g, v, ok := strings.Cut(e.APIVersion, "/")
		if !ok || g != group || v == storage {
			out = append(out, e)
			continue
		}
		changed = true
		e.APIVersion = target
		if rs := renamesFor(renames, v); len(rs) > 0 && e.FieldsV1 != nil {
			raw, err := renameFields(e.FieldsV1.GetRawBytes(), rs)
			if err != nil {
				return nil, false, fmt.Errorf("metadata.managedFields[%d].fieldsV1 (manager %q, %s): %w", i, e.Manager, v, err)
			}
			e.FieldsV1 = metav1.NewFieldsV1(string(raw))
		}
		out = append(out, e)
	}
	if !changed {
		return entries, false, nil
	}
	merged, err := mergeDuplicates(out)
	if err != nil {
		return nil, false, err
	}
	return merged, true, nil
}

// Stale returns the versions of group other than storage that entries
// name, sorted: what [RewriteManagedFields] would rewrite.
func Stale(entries []metav1.ManagedFieldsEntry, group, storage string) []string {
	var vs []string
	for _, e := range entries {
		g, v, ok := strings.Cut(e.APIVersion, "/")
		if ok && g == group && v != storage && !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	slices.Sort(vs)
	return vs
}

func renamesFor(renames []Rename, version string) []Rename {
	var out []Rename
	for _, r := range renames {
		if r.Version == version {
			out = append(out, r)
		}
	}
	return out
}

// renameFields moves each From subtree of a FieldsV1 set to To.
func renameFields(raw []byte, renames []Rename) ([]byte, error) {
	var set map[string]any
	if err := json.Unmarshal(raw, &set); err != nil {
		return nil, err
	}
	for _, r := range renames {
		from, to := fieldKeys(r.From), fieldKeys(r.To)
		sub, ok := take(set, from)
		if !ok {
			continue
		}
		put(set, to, sub)
	}
	return json.Marshal(set)
}

// fieldKeys turns "spec.size" into the FieldsV1 keys "f:spec", "f:size".
func fieldKeys(path string) []string {
	parts := strings.Split(path, ".")
	for i, p := range parts {
		parts[i] = "f:" + p
	}
	return parts
}

// take removes and returns the subtree at keys, and drops the parents it
// leaves holding only the "." marker or nothing.
func take(set map[string]any, keys []string) (any, bool) {
	if len(keys) == 1 {
		v, ok := set[keys[0]]
		delete(set, keys[0])
		return v, ok
	}
	child, ok := set[keys[0]].(map[string]any)
	if !ok {
		return nil, false
	}
	v, found := take(child, keys[1:])
	if found && onlyMarker(child) {
		delete(set, keys[0])
	}
	return v, found
}

func onlyMarker(m map[string]any) bool {
	for k := range m {
		if k != "." {
			return false
		}
	}
	return true
}

// put sets the subtree at keys, merging with what is there.
func put(set map[string]any, keys []string, v any) {
	if len(keys) == 1 {
		set[keys[0]] = union(set[keys[0]], v)
		return
	}
	child, ok := set[keys[0]].(map[string]any)
	if !ok {
		child = map[string]any{}
		set[keys[0]] = child
	}
	put(child, keys[1:], v)
}

// union merges two FieldsV1 subtrees.
func union(a, b any) any {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok {
		return b
	}
	if !bok {
		return a
	}
	for k, v := range bm {
		am[k] = union(am[k], v)
	}
	return am
}

// mergeDuplicates merges entries the API server would see as one manager
// twice: same manager, operation and subresource, and for updates the same
// version. The merged entry owns the union of the fields and keeps the
// later time.
func mergeDuplicates(entries []metav1.ManagedFieldsEntry) ([]metav1.ManagedFieldsEntry, error) {
	type key struct{ manager, op, sub, version string }
	idx := map[key]int{}
	out := make([]metav1.ManagedFieldsEntry, 0, len(entries))
	for i, e := range entries {
		k := key{e.Manager, string(e.Operation), e.Subresource, e.APIVersion}
		if e.Operation == metav1.ManagedFieldsOperationApply {
			k.version = ""
		}
		j, seen := idx[k]
		if !seen {
			idx[k] = len(out)
			out = append(out, e)
			continue
		}
		merged, err := unionFields(out[j].FieldsV1, e.FieldsV1)
		if err != nil {
			return nil, fmt.Errorf("metadata.managedFields[%d].fieldsV1 (manager %q): %w", i, e.Manager, err)
		}
		out[j].FieldsV1 = merged
		if e.Time != nil && (out[j].Time == nil || out[j].Time.Before(e.Time)) {
			out[j].Time = e.Time
		}
	}
	return out, nil
}

func unionFields(a, b *metav1.FieldsV1) (*metav1.FieldsV1, error) {
	if a == nil {
		return b, nil
	}
	if b == nil {
		return a, nil
	}
	var am, bm map[string]any
	if err := json.Unmarshal(a.GetRawBytes(), &am); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b.GetRawBytes(), &bm); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(union(am, bm))
	if err != nil {
		return nil, err
	}
	return metav1.NewFieldsV1(string(raw)), nil
}
