package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestExamples checks the examples' generated CRDs, as `make generate`
// does: a CRD the API server would refuse fails the test.
func TestExamples(t *testing.T) {
	// Each example's CRDs, where `make generate` writes them: config/crd,
	// or config/crd/bases in a kubebuilder project (with a PROJECT file).
	examples, err := filepath.Glob("../../../examples/*/config/crd")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, dir := range examples {
		if _, err := os.Stat(filepath.Join(dir, "..", "..", "PROJECT")); err == nil {
			dir = filepath.Join(dir, "bases")
		}
		dirs = append(dirs, dir)
	}
	if len(dirs) < 2 {
		t.Fatalf("found %d CRD directories under examples/, want the examples'", len(dirs))
	}
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), dirs, &stdout, &stderr)
	t.Logf("crdcheck %s:\n%s%s", strings.Join(dirs, " "), stdout.String(), stderr.String())
	if code != 0 || strings.Count(stdout.String(), "ok ") != len(dirs) {
		t.Errorf("crdcheck of the examples: exit %d, want 0 and one CRD ok per example", code)
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	refused := filepath.Join(dir, "refused.yaml")
	if err := os.WriteFile(refused, []byte(costly), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "no argument", wantCode: 2, wantStderr: "usage: crdcheck FILE|DIR...\n"},
		{name: "missing", args: []string{filepath.Join(dir, "nope")}, wantCode: 1, wantStderr: "crdcheck: read CustomResourceDefinitions: stat " + filepath.Join(dir, "nope") + ": no such file or directory\n"},
		{
			name: "refused", args: []string{refused}, wantCode: 1,
			wantStdout: "REFUSED costlies.crdtest.kopgo.dev (" + refused + "):\n" +
				"\tspec.validation.openAPIV3Schema.properties[spec].properties[tags].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)\n" +
				"\tspec.validation.openAPIV3Schema.properties[spec].properties[tags].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema\n" +
				"\tspec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(t.Context(), tt.args, &stdout, &stderr)
			if diff := cmp.Diff(tt.wantCode, code); diff != "" {
				t.Errorf("exit code (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantStdout, stdout.String()); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantStderr, stderr.String()); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}

// costly is a CRD whose rule compares every pair of an unbounded list of
// unbounded strings.
const costly = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: costlies.crdtest.kopgo.dev
spec:
  group: crdtest.kopgo.dev
  names: {kind: Costly, listKind: CostlyList, plural: costlies, singular: costly}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              tags:
                type: array
                items: {type: string}
                x-kubernetes-validations:
                - rule: "self.all(x, self.all(y, x == y || !x.contains(y)))"
`
