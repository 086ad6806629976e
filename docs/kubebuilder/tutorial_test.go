package kubebuilder_test

import (
	"bufio"
	"bytes"
	"flag"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var update = flag.Bool("update", false, "rewrite "+migrated+" from the guide's steps")

const (
	// project is kubebuilder's CronJob tutorial project as a user has it
	// when the tutorial ends (the parts its controller suite needs), the
	// "before" of the guide.
	project = "testdata/project"
	// controllerFile is the file the guide's steps change, in project.
	controllerFile = "internal/controller/cronjob_controller.go"
	// migrated is controllerFile once every step is applied, committed for
	// readers and kept equal to what the steps give.
	migrated = "testdata/migrated/cronjob_controller.go"
	// roleFile is the ClusterRole `make manifests` writes in project, and
	// migratedRole the one it writes once every step is applied.
	roleFile     = "config/rbac/role.yaml"
	migratedRole = "testdata/migrated/role.yaml"

	replaceMarker = "<!-- replace -->"
	withMarker    = "<!-- with -->"
)

// step is one "## Step" section of the guide: the replacements it shows,
// the go commands it says to run, in order, and whether it says to run
// `make manifests`.
type step struct {
	title     string
	edits     []edit
	command   [][]string
	manifests bool
	names     []string // the file's names its text refers to (see proseNames)
}

// proseNameRE is a name of the file that a step's text may refer to in a
// code span: a method or field of the reconciler (`r.env`), or a local
// name in lowerCamelCase (`scheduledResult`, `constructJobForCronJob`).
var proseNameRE = regexp.MustCompile("`((?:r\\.)?[a-z]\\w*[A-Z]\\w*|r\\.\\w+)`")

// edit is a pair of Go blocks: the one after "<!-- replace -->" and the
// one after "<!-- with -->".
type edit struct {
	line          int // of the replaced block's fence
	before, after string
}

// guideSteps reads the steps of the guide. A Go block after a line
// "<!-- replace -->" is code of the file to find (once, exactly); the next
// Go block, after "<!-- with -->", is what replaces it. In a ```sh block of
// a step, every line that starts with "go " is a command to run in the
// project, and a line "make manifests" regenerates the project's
// ClusterRole as kubebuilder's Makefile does.
func guideSteps(t *testing.T, path string) []step {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var (
		steps  []step
		cur    *step
		fence  string // the open block's language, "" outside a block
		marker string // the marker before the open block
		body   []string
		start  int
		prev   string // the last non-blank line outside blocks
		open   *edit
	)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case fence == "" && strings.HasPrefix(line, "## "):
			if open != nil {
				t.Fatalf("%s:%d: a replaced block without its %s block", path, open.line, withMarker)
			}
			cur = nil
			if strings.HasPrefix(line, "## Step ") {
				steps = append(steps, step{title: strings.TrimPrefix(line, "## ")})
				cur = &steps[len(steps)-1]
			}
		case fence == "" && strings.HasPrefix(line, "```") && len(line) > 3:
			fence, body, start = line[3:], nil, n
			marker = ""
			if prev == replaceMarker || prev == withMarker {
				marker = prev
			}
		case fence != "" && line == "```":
			text := strings.Join(body, "\n") + "\n"
			switch {
			case marker != "" && (cur == nil || fence != "go"):
				t.Fatalf("%s:%d: %s before a block that is not Go code in a step", path, start, marker)
			case marker == replaceMarker:
				if open != nil {
					t.Fatalf("%s:%d: two replaced blocks in a row", path, start)
				}
				open = &edit{line: start, before: text}
			case marker == withMarker:
				if open == nil {
					t.Fatalf("%s:%d: %s without a replaced block before it", path, start, withMarker)
				}
				open.after = text
				cur.edits = append(cur.edits, *open)
				open = nil
			case fence == "sh" && cur != nil:
				for _, l := range body {
					if strings.TrimSpace(l) == "make manifests" {
						cur.manifests = true
					}
					if !strings.HasPrefix(l, "go ") {
						continue
					}
					l, _, _ = strings.Cut(l, "#")
					cur.command = append(cur.command, strings.Fields(l))
				}
			}
			fence = ""
			prev = ""
		case fence != "":
			body = append(body, line)
		case strings.TrimSpace(line) != "":
			prev = strings.TrimSpace(line)
			if cur != nil {
				for _, m := range proseNameRE.FindAllStringSubmatch(line, -1) {
					cur.names = append(cur.names, m[1])
				}
			}
		}
	}
	if open != nil {
		t.Fatalf("%s:%d: a replaced block without its %s block", path, open.line, withMarker)
	}
	return steps
}

// TestGuideFollowedLiterally follows docs/kubebuilder.md as a reader
// does, on the tutorial's own project: it copies testdata/project (the
// tutorial's files as kubebuilder writes them) into a temporary directory
// beside a "kopgo" directory that is this repository (the local checkout
// of Step 0), runs the go commands of each step, replaces each step's
// "before" block, which must be in the file exactly once at that point, by
// its "after" block, and after every step that changes the file checks
// that it is gofmt'ed, that the project builds, and that the names of the
// file the step's text refers to (`r.env`, `scheduledResult`) are in it. After the last step it
// checks that the controller writes status through kopgo only, imports no
// internal package, equals testdata/migrated (-update rewrites it), that
// `make manifests` (controller-gen's rbac generator, as kubebuilder's
// Makefile runs it) gave the ClusterRole in testdata/migrated/role.yaml,
// and runs the tutorial's own controller suite (envtest, on testkit's
// kube-apiserver and etcd).
func TestGuideFollowedLiterally(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a project and runs its envtest suite")
	}
	steps := guideSteps(t, guide)
	if len(steps) < 8 {
		t.Fatalf("%s has %d steps; the guide has lost them", guide, len(steps))
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	assets := os.Getenv("KOPGO_TESTKIT_BIN")
	if assets == "" {
		assets = filepath.Join(root, "bin", "testkit")
	}
	if _, err := os.Stat(filepath.Join(assets, "kube-apiserver")); err != nil {
		t.Fatalf("no kube-apiserver for the tutorial's envtest suite (%v): run `make testkit-bin`, or set KOPGO_TESTKIT_BIN", err)
	}
	controllerGen := findControllerGen(t, root, assets)

	dir := t.TempDir()
	proj := filepath.Join(dir, "project")
	copyTree(t, project, proj)
	if err := os.Symlink(root, filepath.Join(dir, "kopgo")); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(proj, controllerFile)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	src := string(data)
	for _, s := range steps {
		for _, e := range s.edits {
			switch n := strings.Count(src, e.before); n {
			case 1:
				src = strings.Replace(src, e.before, e.after, 1)
			case 0:
				t.Fatalf("%s:%d (%s): the code to replace is not in %s at this point:\n%s", guide, e.line, s.title, controllerFile, e.before)
			default:
				t.Fatalf("%s:%d (%s): the code to replace is in %s %d times; a reader cannot tell which:\n%s", guide, e.line, s.title, controllerFile, n, e.before)
			}
		}
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, c := range s.command {
			goCmd(t, proj, nil, s.title, c[1:]...)
		}
		if s.manifests {
			cmd := exec.CommandContext(t.Context(), controllerGen, "rbac:roleName=manager-role", "paths=./...")
			cmd.Dir = proj
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: make manifests (controller-gen rbac): %v\n%s", s.title, err, out)
			}
		}
		if len(s.edits) == 0 {
			continue
		}
		for _, name := range s.names {
			if !regexp.MustCompile(`\b`+regexp.QuoteMeta(name)+`\b`).MatchString(src) && !apiFields[name] {
				t.Errorf("%s: the text names %s, which is not in %s after this step", s.title, name, controllerFile)
			}
		}
		if formatted, err := format.Source([]byte(src)); err != nil {
			t.Fatalf("%s: %s does not parse: %v", s.title, controllerFile, err)
		} else if string(formatted) != src {
			t.Errorf("%s: %s is not gofmt'ed after this step", s.title, controllerFile)
		}
		goCmd(t, proj, nil, s.title, "build", "./...")
	}

	if strings.Contains(src, "Status().Update(") || strings.Contains(src, "r.Create(") {
		t.Errorf("after the last step %s still updates status or creates Jobs by hand", controllerFile)
	}
	f, err := parser.ParseFile(token.NewFileSet(), file, src, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if strings.Contains("/"+p+"/", "/internal/") {
			t.Errorf("after the last step %s imports %s, an internal package", controllerFile, p)
		}
	}
	role, err := os.ReadFile(filepath.Join(proj, roleFile))
	if err != nil {
		t.Fatal(err)
	}
	for file, got := range map[string]string{migrated: src, migratedRole: string(role)} {
		if *update {
			if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		} else if want, err := os.ReadFile(file); err != nil || string(want) != got {
			t.Errorf("%s is not what the guide's steps give (%v): go test -run TestGuideFollowedLiterally ./docs/kubebuilder -update", file, err)
		}
	}

	out := goCmd(t, proj, []string{"KUBEBUILDER_ASSETS=" + assets}, "the tutorial's suite",
		"test", "-count=1", "-v", "-run", "TestControllers", "./internal/controller/")
	if !strings.Contains(out, "--- PASS: TestControllers") {
		t.Errorf("the tutorial's suite did not run:\n%s", out)
	}
}

// findControllerGen returns kopgo's pinned controller-gen: $KOPGO_CONTROLLER_GEN,
// or bin/controller-gen-*/controller-gen of this repository or of the one
// the testkit binaries were built in.
func findControllerGen(t *testing.T, root, assets string) string {
	t.Helper()
	if p := os.Getenv("KOPGO_CONTROLLER_GEN"); p != "" {
		return p
	}
	for _, bin := range []string{filepath.Join(root, "bin"), filepath.Dir(assets)} {
		if m, _ := filepath.Glob(filepath.Join(bin, "controller-gen-*", "controller-gen")); len(m) > 0 {
			return m[len(m)-1]
		}
	}
	t.Fatal("no controller-gen for the guide's `make manifests`: run `make tools`, or set KOPGO_CONTROLLER_GEN")
	return ""
}

// apiFields are the JSON names of the API fields a step's text may name
// (`lastTransitionTime`): not Go names of the file.
var apiFields = func() map[string]bool {
	m := map[string]bool{}
	for _, typ := range []reflect.Type{reflect.TypeFor[metav1.Condition](), reflect.TypeFor[metav1.ObjectMeta]()} {
		for f := range typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			m[name] = true
		}
	}
	return m
}()

// goCmd runs the go command in dir and fails the test with its output if
// it fails.
func goCmd(t *testing.T, dir string, env []string, what string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOWORK=off"), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: go %s: %v\n%s", what, strings.Join(args, " "), err, tail(string(out), 200))
	}
	return string(out)
}

// tail returns the last n lines of s: the summary of a Ginkgo suite's
// failure comes after every log line of the run.
func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return s
	}
	return "...\n" + strings.Join(lines[len(lines)-n:], "\n")
}

// copyTree copies the regular files under from to to.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
