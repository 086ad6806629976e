// Package kubebuilder_test checks kopgo's kubebuilder migration guide,
// docs/kubebuilder.md: TestGuideFollowedLiterally applies its steps to the
// controller of kubebuilder's CronJob tutorial (testdata/project) and runs
// the tutorial's own suite on the result; TestGuideCodeIsCompiled checks
// that its other Go blocks are code this repository compiles.
package kubebuilder_test

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// guide is the migration guide whose Go blocks this test checks.
const guide = "../kubebuilder.md"

// sources are the directories whose Go files the guide may quote outside
// its replacements: the migrated controller (built and run by
// TestGuideFollowedLiterally) and the kubebuilder example (compiled and
// run by its own tests).
var sources = []string{"testdata/migrated", "../../examples/kubebuilder"}

// elision is a line of a guide block that stands for any number of lines
// of the source, none included.
const elision = "// ..."

// Every ```go block of docs/kubebuilder.md that is not part of a step's
// replacement (those are applied and built by TestGuideFollowedLiterally)
// is a run of lines of a Go file that is compiled and tested: the guide
// cannot show code that does not build, or that its tests do not run. Lines are compared
// without their indentation (a block may quote the body of a function),
// and a line "// ..." in a block stands for lines left out.
func TestGuideCodeIsCompiled(t *testing.T) {
	blocks := goBlocks(t, guide)
	if len(blocks) < 20 {
		t.Fatalf("%s has %d Go blocks; the guide has lost its code", guide, len(blocks))
	}
	files := goFiles(t)
	quoted := 0
	for _, b := range blocks {
		if b.replacement {
			continue
		}
		quoted++
		found := false
		for _, lines := range files {
			if contains(lines, b.lines) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("%s:%d: this Go block is not in any Go file under %v (is the code it quotes still the same?):\n%s",
				guide, b.line, sources, strings.Join(b.lines, "\n"))
		}
	}
	if quoted == 0 {
		t.Errorf("%s: every Go block is a replacement; none was checked here", guide)
	}
}

type block struct {
	line        int // of the opening fence
	lines       []string
	replacement bool // after a replace or with marker: part of a step's edit
}

// goBlocks returns the ```go blocks of a Markdown file, each line trimmed.
func goBlocks(t *testing.T, path string) []block {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []block
	var cur *block
	prev := "" // the last non-blank line outside blocks
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```go":
			cur = &block{line: n, replacement: prev == replaceMarker || prev == withMarker}
		case cur != nil && strings.TrimSpace(line) == "```":
			if len(cur.lines) == 0 {
				t.Errorf("%s:%d: empty Go block", path, cur.line)
			}
			out = append(out, *cur)
			cur = nil
			prev = ""
		case cur != nil:
			cur.lines = append(cur.lines, strings.TrimSpace(line))
		case strings.TrimSpace(line) != "":
			prev = strings.TrimSpace(line)
		}
	}
	if cur != nil {
		t.Errorf("%s:%d: Go block not closed", path, cur.line)
	}
	return out
}

// goFiles returns the lines of every Go file under sources, trimmed.
func goFiles(t *testing.T) map[string][]string {
	t.Helper()
	files := map[string][]string{}
	for _, root := range sources {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			lines := strings.Split(string(data), "\n")
			for i := range lines {
				lines[i] = strings.TrimSpace(lines[i])
			}
			files[path] = lines
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// contains reports whether want is a run of lines of have, an elision in
// want standing for any number of lines.
func contains(have, want []string) bool {
	for start := range have {
		if matchAt(have, start, want) {
			return true
		}
	}
	return false
}

func matchAt(have []string, i int, want []string) bool {
	for j := range want {
		if want[j] == elision {
			for k := i; k <= len(have); k++ {
				if matchAt(have, k, want[j+1:]) {
					return true
				}
			}
			return false
		}
		if i >= len(have) || have[i] != want[j] {
			return false
		}
		i++
	}
	return true
}

// The matcher itself: a quoted run matches, a changed line does not, an
// elision skips lines.
func TestContains(t *testing.T) {
	have := []string{"a", "b", "c", "d"}
	for _, tc := range []struct {
		want []string
		ok   bool
	}{
		{[]string{"b", "c"}, true},
		{[]string{"b", "d"}, false},
		{[]string{"a", elision, "d"}, true},
		{[]string{"a", elision, "e"}, false},
		{[]string{"c", "d", "e"}, false},
	} {
		if got := contains(have, tc.want); got != tc.ok {
			t.Errorf("contains(%q, %q) = %v, want %v", have, tc.want, got, tc.ok)
		}
	}
}
