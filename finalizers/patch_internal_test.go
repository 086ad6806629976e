package finalizers

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	jsonpatch "gopkg.in/evanphx/json-patch.v4" // the library the API server applies JSON patches with
)

const ours = "kopgo.dev/cleanup"

func TestOps(t *testing.T) {
	tests := []struct {
		name string
		ops  []patchOp
		want string
	}{
		{"add to none", addOps(nil, ours),
			`[{"op":"test","path":"/metadata/finalizers","value":null},{"op":"add","path":"/metadata/finalizers","value":["kopgo.dev/cleanup"]}]`},
		{"add to some", addOps([]string{"a.io/x"}, ours),
			`[{"op":"test","path":"/metadata/finalizers","value":["a.io/x"]},{"op":"add","path":"/metadata/finalizers","value":["a.io/x","kopgo.dev/cleanup"]}]`},
		{"remove, last to first", removeOps([]string{ours, "a.io/x", ours}, []string{ours}),
			`[{"op":"test","path":"/metadata/finalizers/2","value":"kopgo.dev/cleanup"},{"op":"remove","path":"/metadata/finalizers/2"},` +
				`{"op":"test","path":"/metadata/finalizers/0","value":"kopgo.dev/cleanup"},{"op":"remove","path":"/metadata/finalizers/0"}]`},
		{"remove absent", removeOps([]string{"a.io/x"}, []string{ours}), `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.ops)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("patch (-want +got):\n%s", diff)
			}
		})
	}
}

// The safety argument of the package documentation, checked the way the
// API server applies our patches: whatever other writers did to the list
// between our read and our patch, the patch either fails (and changes
// nothing) or changes our entries only, keeping every other entry in its
// order.
func TestPatchesNeverTouchOtherEntries(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pool := []string{"a.io/0", "a.io/1", "a.io/2", "b.io/0", "b.io/1", ours}
	outcomes := map[string]int{}
	for i := range 5000 {
		read := randomList(rng, pool)
		server := mutate(rng, read, pool)
		for _, add := range []bool{true, false} {
			var ops []patchOp
			if add {
				if slices.Contains(read, ours) {
					continue
				}
				ops = addOps(read, ours)
			} else {
				ops = removeOps(read, []string{ours})
				if len(ops) == 0 {
					continue
				}
			}
			got, err := apply(server, ops)
			what := fmt.Sprintf("case %d: add=%t read %q, server %q", i, add, read, server)
			if err != nil {
				outcomes["refused"]++
				if add && slices.Equal(read, server) {
					t.Fatalf("%s: refused although nobody changed the list: %v", what, err)
				}
				continue
			}
			outcomes["applied"]++
			if diff := cmp.Diff(others(server), others(got), cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("%s: other entries changed (-server +patched):\n%s", what, diff)
			}
			switch n := count(got, ours); {
			case add && n != 1:
				t.Fatalf("%s: added, ours listed %d times: %q", what, n, got)
			case !add && n >= count(server, ours):
				t.Fatalf("%s: removed, ours still listed %d times: %q", what, n, got)
			}
		}
	}
	if outcomes["refused"] == 0 || outcomes["applied"] == 0 {
		t.Fatalf("the random cases did not cover both outcomes: %v", outcomes)
	}
	t.Logf("outcomes: %v", outcomes)
}

func randomList(rng *rand.Rand, pool []string) []string {
	var l []string
	for _, i := range rng.Perm(len(pool))[:rng.IntN(len(pool)+1)] {
		l = append(l, pool[i])
	}
	return l
}

// mutate is what other writers may have done since list was read: insert
// or remove entries anywhere, ours included (another copy of this
// controller, or a person), or nothing.
func mutate(rng *rand.Rand, list, pool []string) []string {
	out := slices.Clone(list)
	for range rng.IntN(4) {
		if len(out) > 0 && rng.IntN(2) == 0 {
			i := rng.IntN(len(out))
			out = slices.Delete(out, i, i+1)
		} else {
			out = slices.Insert(out, rng.IntN(len(out)+1), pool[rng.IntN(len(pool))])
		}
	}
	return out
}

// apply applies ops to an object whose finalizers are fins, with the
// library and the JSON shape of the API server (an empty list is absent).
func apply(fins []string, ops []patchOp) ([]string, error) {
	meta := map[string]any{"name": "x", "uid": "u"}
	if len(fins) > 0 {
		meta["finalizers"] = fins
	}
	doc, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(append(preconditions("u"), ops...))
	if err != nil {
		return nil, err
	}
	p, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		return nil, err
	}
	out, err := p.Apply(doc)
	if err != nil {
		return nil, err
	}
	var obj struct {
		Metadata struct {
			Finalizers []string `json:"finalizers"`
		} `json:"metadata"`
	}
	err = json.Unmarshal(out, &obj)
	return obj.Metadata.Finalizers, err
}

func others(l []string) []string {
	return slices.DeleteFunc(slices.Clone(l), func(f string) bool { return f == ours })
}

func count(l []string, s string) (n int) {
	for _, x := range l {
		if x == s {
			n++
		}
	}
	return n
}

func TestUIDPreconditionRefusesAnotherObject(t *testing.T) {
	doc := []byte(`{"metadata":{"name":"x","uid":"new"}}`)
	raw, err := json.Marshal(append(preconditions("old"), addOps(nil, ours)...))
	if err != nil {
		t.Fatal(err)
	}
	p, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := p.Apply(doc); err == nil {
		t.Errorf("patch for uid old applied to uid new: %s", out)
	}
}
