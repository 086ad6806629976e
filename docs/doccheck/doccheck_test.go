package doccheck_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/kopgo/kopgo"

// root is the module's directory, from this package's.
const root = "../.."

// listed is what `go list -json` says of one package.
type listed struct {
	ImportPath string
	Name       string
	Dir        string
	GoFiles    []string
	Export     string
	Standard   bool
}

// index resolves names in packages from their export data.
type index struct {
	pkgs    map[string]*listed // by import path: the module's and every dependency
	byName  map[string][]string
	imp     types.Importer
	types   map[string][]*types.TypeName // kopgo's exported types by name
	loaded  map[string]*types.Package
	loadErr map[string]error
}

func newIndex(t *testing.T) *index {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", "list", "-deps", "-export",
		"-json=ImportPath,Name,Dir,GoFiles,Export,Standard", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	ix := &index{
		pkgs:    map[string]*listed{},
		byName:  map[string][]string{},
		types:   map[string][]*types.TypeName{},
		loaded:  map[string]*types.Package{},
		loadErr: map[string]error{},
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		ix.pkgs[p.ImportPath] = &p
		if p.Standard || ix.public(p.ImportPath) {
			ix.byName[p.Name] = append(ix.byName[p.Name], p.ImportPath)
		}
	}
	fset := token.NewFileSet()
	ix.imp = importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		p := ix.pkgs[path]
		if p == nil || p.Export == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(p.Export)
	})
	for path := range ix.pkgs {
		if !ix.public(path) {
			continue
		}
		p := ix.pkg(path)
		if p == nil {
			continue
		}
		for _, name := range p.Scope().Names() {
			if tn, ok := p.Scope().Lookup(name).(*types.TypeName); ok && tn.Exported() {
				ix.types[name] = append(ix.types[name], tn)
			}
		}
	}
	return ix
}

// public reports whether path is one of kopgo's importable packages.
func (ix *index) public(path string) bool {
	return (path == module || strings.HasPrefix(path, module+"/")) && !strings.Contains(path+"/", "/internal/")
}

// pkg returns the package at path, nil when it is not in the build.
func (ix *index) pkg(path string) *types.Package {
	if p, ok := ix.loaded[path]; ok {
		return p
	}
	if _, ok := ix.pkgs[path]; !ok {
		return nil
	}
	p, err := ix.imp.Import(path)
	if err != nil {
		ix.loadErr[path] = err
		p = nil
	}
	ix.loaded[path] = p
	return p
}

// has reports whether p declares names[0], and names[0] has the field or
// method names[1] when there is one.
func has(p *types.Package, names []string) bool {
	obj := p.Scope().Lookup(names[0])
	if obj == nil {
		return false
	}
	if len(names) == 1 {
		return true
	}
	tn, ok := obj.(*types.TypeName)
	if !ok {
		return false
	}
	return hasMember(tn, names[1])
}

func hasMember(tn *types.TypeName, name string) bool {
	o, _, _ := types.LookupFieldOrMethod(tn.Type(), true, tn.Pkg(), name)
	return o != nil
}

// problem is one name that does not resolve.
type problem struct {
	where, name, why string
}

func (p problem) String() string { return p.where + ": " + p.name + ": " + p.why }

// linkRE finds a doc link: [Name], [Name.Member], [pkg.Name],
// [pkg.Name.Member] or [import/path.Name], with an optional *, standing
// apart from the words around it (go/doc's rule), not a Markdown link.
var linkRE = regexp.MustCompile(`(?:^|[^\w\]\)\[])\[(\*?)([A-Za-z_]\w*(?:\.[A-Za-z_]\w*){0,2}|[a-z0-9.-]+(?:/[\w.-]+)+\.[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)\](?:[^\w\[(:]|$)`)

// linkDefRE is a link definition of a doc comment: [text]: URL.
var linkDefRE = regexp.MustCompile(`^\s*\[([^\]]+)\]:\s*\S`)

// docLinks checks the doc links of every doc comment in the module's
// non-test Go files.
func docLinks(t *testing.T, ix *index) []problem {
	t.Helper()
	var out []problem
	for path, lp := range ix.pkgs {
		if !strings.HasPrefix(path, module) || len(lp.GoFiles) == 0 {
			continue
		}
		self := ix.pkg(path)
		if self == nil {
			t.Errorf("%s: %v", path, ix.loadErr[path])
			continue
		}
		fset := token.NewFileSet()
		var files []*ast.File
		imports := map[string]string{lp.Name: path}
		for _, name := range lp.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(lp.Dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
			for _, spec := range f.Imports {
				ipath := strings.Trim(spec.Path.Value, `"`)
				name := ""
				if spec.Name != nil {
					name = spec.Name.Name
				} else if p := ix.pkgs[ipath]; p != nil {
					name = p.Name
				}
				if name != "" && name != "_" && name != "." {
					imports[name] = ipath
				}
			}
		}
		for _, f := range files {
			for _, cg := range docComments(f) {
				out = append(out, checkComment(ix, self, imports, fset, cg)...)
			}
		}
	}
	return out
}

// docComments returns the doc comments of a file: the package's, and those
// of its declarations, specs and fields.
func docComments(f *ast.File) []*ast.CommentGroup {
	var out []*ast.CommentGroup
	add := func(cg *ast.CommentGroup) {
		if cg != nil {
			out = append(out, cg)
		}
	}
	add(f.Doc)
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			add(n.Doc)
			return false // comments in bodies are not documentation
		case *ast.GenDecl:
			add(n.Doc)
		case *ast.TypeSpec:
			add(n.Doc)
		case *ast.ValueSpec:
			add(n.Doc)
		case *ast.Field:
			add(n.Doc)
		}
		return true
	})
	return out
}

func checkComment(ix *index, self *types.Package, imports map[string]string, fset *token.FileSet, cg *ast.CommentGroup) []problem {
	var lines []string
	var pos []token.Pos
	for _, c := range cg.List {
		text := c.Text
		if line, ok := strings.CutPrefix(text, "//"); ok {
			lines, pos = append(lines, line), append(pos, c.Pos())
			continue
		}
		for l := range strings.SplitSeq(strings.TrimSuffix(strings.TrimPrefix(text, "/*"), "*/"), "\n") {
			lines, pos = append(lines, l), append(pos, c.Pos())
		}
	}
	defined := map[string]bool{}
	for _, l := range lines {
		if m := linkDefRE.FindStringSubmatch(l); m != nil {
			defined[m[1]] = true
		}
	}
	var out []problem
	for i, l := range lines {
		p := fset.Position(pos[i])
		where := fmt.Sprintf("%s:%d", relPath(p.Filename), p.Line)
		if self.Path() != module+"/docs/doccheck" { // this package's doc shows the forms
			out = append(out, mdCheck(ix, where, l)...)
			out = append(out, typeMembers(ix, self, where, l)...)
		}
		if strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "  ") || strings.HasPrefix(l, "go:") || strings.HasPrefix(l, " +") || strings.HasPrefix(l, "+") {
			continue // code, directives and markers
		}
		for _, m := range linkRE.FindAllStringSubmatch(l, -1) {
			text := m[2]
			if defined[text] {
				continue
			}
			if why := resolveLink(ix, self, imports, text); why != "" {
				out = append(out, problem{where: where, name: "[" + m[1] + text + "]", why: why})
			}
		}
	}
	return out
}

// resolveLink returns why a doc link's text does not resolve, "" when it
// does or when it is not a link go/doc would try to make.
func resolveLink(ix *index, self *types.Package, imports map[string]string, text string) string {
	var pkgPart string
	rest := text
	if i := strings.LastIndex(text, "/"); i >= 0 { // an import path
		dot := strings.Index(text[i:], ".")
		if dot < 0 {
			return ""
		}
		pkgPart, rest = text[:i+dot], text[i+dot+1:]
	}
	parts := strings.Split(rest, ".")
	if pkgPart == "" {
		first := parts[0]
		if len(parts) == 1 {
			if !ast.IsExported(first) {
				return "" // [i], [optional]: text, not a link to an exported name
			}
			if has(self, parts) || types.Universe.Lookup(first) != nil {
				return ""
			}
			return "not declared in package " + self.Path()
		}
		if len(parts) == 2 && self.Scope().Lookup(first) != nil {
			if has(self, parts) {
				return ""
			}
			return fmt.Sprintf("%s has no field or method %s", first, parts[1])
		}
		pkgPart, parts = first, parts[1:]
	}
	if len(parts) > 2 {
		return ""
	}
	var paths []string
	switch {
	case strings.Contains(pkgPart, "/"):
		paths = []string{pkgPart}
	case imports[pkgPart] != "":
		paths = []string{imports[pkgPart]}
	default:
		paths = ix.byName[aliasOf(pkgPart)]
	}
	if len(paths) == 0 {
		return fmt.Sprintf("package %s is not imported here, nor a kopgo or standard package", pkgPart)
	}
	for _, path := range paths {
		p := ix.pkg(path)
		if p == nil {
			return "package " + path + " is not in the build"
		}
		if has(p, parts) {
			return ""
		}
	}
	return "not declared in " + strings.Join(paths, " or ")
}

// aliasOf maps the import aliases kopgo's docs give to package names.
func aliasOf(name string) string {
	switch name {
	case "kopcontroller":
		return "controller"
	case "koperrors":
		return "errors"
	case "kopmeta":
		return "meta"
	}
	return name
}

// mdPackages are the package names and aliases a Markdown name may start
// with: kopgo's, and none an operator imports from elsewhere.
var mdPackages = []string{
	"apply", "reconciler", "status", "finalizers", "gc", "watch", "owners", "scope",
	"observability", "resources", "testkit", "crdtest", "kopcontroller", "koperrors", "kopmeta",
}

var (
	mdPkgNameRE  = regexp.MustCompile(`(?:^|[^\w.])(` + strings.Join(mdPackages, "|") + `)\.([A-Z]\w*)(?:\.([A-Z]\w*))?`)
	mdTypeNameRE = regexp.MustCompile(`(?:^|[^\w.])([A-Z]\w*)\.([A-Z]\w*)`)
	codeSpanRE   = regexp.MustCompile("`([^`]+)`")
	mdLinkRE     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
)

// mdNames checks the kopgo names a Markdown file names in code spans and
// Go blocks. In CHANGELOG.md a name that does not resolve is accepted in a
// bullet marked **Breaking** (see the package documentation).
func mdNames(t *testing.T, ix *index, file string) []problem {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	changelog := file == "CHANGELOG.md"
	var out []problem
	var bullet []problem // the current bullet's problems, pending its end
	breaking := false
	flush := func() {
		if !breaking {
			out = append(out, bullet...)
		}
		bullet, breaking = nil, false
	}
	inGo, inFence := false, false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inGo = !inFence && strings.TrimSpace(line) == "```go"
			inFence = !inFence
			continue
		}
		if changelog && (strings.HasPrefix(line, "- ") || strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "") {
			flush()
		}
		if strings.Contains(line, "**Breaking**") {
			breaking = true
		}
		where := fmt.Sprintf("%s:%d", file, n)
		var found []problem
		switch {
		case inGo:
			found = mdCheck(ix, where, line)
		case !inFence:
			found = append(found, mdLinks(where, file, line)...)
			for _, m := range codeSpanRE.FindAllStringSubmatch(line, -1) {
				found = append(found, mdCheck(ix, where, m[1])...)
				found = append(found, typeMembers(ix, nil, where, m[1])...)
			}
		}
		if changelog {
			bullet = append(bullet, found...)
		} else {
			out = append(out, found...)
		}
	}
	flush()
	return out
}

// mdCheck checks every pkg.Name[.Member] of kopgo's packages in text.
func mdCheck(ix *index, where, text string) []problem {
	var out []problem
	for _, m := range mdPkgNameRE.FindAllStringSubmatch(text, -1) {
		names := []string{m[2]}
		if m[3] != "" {
			names = append(names, m[3])
		}
		name := m[1] + "." + strings.Join(names, ".")
		paths := ix.byName[aliasOf(m[1])]
		ok := false
		for _, path := range paths {
			if !ix.public(path) {
				continue
			}
			if p := ix.pkg(path); p != nil && (has(p, names) || len(names) == 2 && has(p, names[:1]) && !isType(p, names[0])) {
				ok = true // a member of a function's result or a variable is not checked
			}
		}
		if !ok {
			out = append(out, problem{where: where, name: name, why: "not declared in kopgo's " + aliasOf(m[1]) + " package"})
		}
	}
	return out
}

// mdLinks checks that the files a Markdown line links to, by a relative
// path, exist (a guide's code moved, a package gone).
func mdLinks(where, file, line string) []problem {
	var out []problem
	for _, m := range mdLinkRE.FindAllStringSubmatch(line, -1) {
		target, _, _ := strings.Cut(m[1], "#")
		if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, filepath.Dir(file), target)); err != nil {
			out = append(out, problem{where: where, name: m[1], why: "the linked file does not exist"})
		}
	}
	return out
}

func isType(p *types.Package, name string) bool {
	_, ok := p.Scope().Lookup(name).(*types.TypeName)
	return ok
}

// typeMembers checks every Type.Member in text where Type is an exported
// type of a kopgo package; other types (ObjectMeta.Name) are not kopgo's to
// check, and neither is a qualified one (ctrl.Result.RequeueAfter).
func typeMembers(ix *index, self *types.Package, where, text string) []problem {
	var out []problem
	for _, m := range mdTypeNameRE.FindAllStringSubmatch(text, -1) {
		typ, member := m[1], m[2]
		tns := ix.types[typ]
		if self != nil { // a comment names its own package's types first (an internal package's too)
			if tn, ok := self.Scope().Lookup(typ).(*types.TypeName); ok && hasMember(tn, member) {
				continue
			}
		}
		if len(tns) == 0 || slices.ContainsFunc(tns, func(tn *types.TypeName) bool { return hasMember(tn, member) }) {
			continue
		}
		out = append(out, problem{where: where, name: typ + "." + member, why: "no kopgo type " + typ + " has it"})
	}
	return out
}

func relPath(path string) string {
	abs, err := filepath.Abs(root)
	if err != nil {
		return path
	}
	if rel, err := filepath.Rel(abs, path); err == nil {
		return rel
	}
	return path
}

// markdown are the documentation files whose names are checked: the
// README, the CHANGELOG, docs/*.md and the bench's README.
func markdown(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md", "CHANGELOG.md", "bench/README.md"}
	for _, d := range docs {
		out = append(out, filepath.ToSlash(strings.TrimPrefix(d, root+string(filepath.Separator))))
	}
	return out
}

// TestDocumentedNamesExist fails for every doc link of the module's doc
// comments and every kopgo name of its Markdown documentation that does
// not resolve (see the package documentation for which names are checked
// and the CHANGELOG's rule), and for every relative Markdown link to a
// file that does not exist.
func TestDocumentedNamesExist(t *testing.T) {
	ix := newIndex(t)
	problems := docLinks(t, ix)
	files := markdown(t)
	for _, f := range files {
		problems = append(problems, mdNames(t, ix, f)...)
	}
	slices.SortFunc(problems, func(a, b problem) int { return strings.Compare(a.String(), b.String()) })
	for _, p := range slices.Compact(problems) {
		t.Error(p)
	}
	if len(files) < 4 {
		t.Errorf("checked %v; the documentation files are gone?", files)
	}
}

// docs/external.md quotes the test kit's example test verbatim: the quote
// is the test that make test runs.
func TestExternalDocsQuoteTheKitsTest(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(root, "test/testkit/fakesystem/docs_example_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(src), "func TestLostAnswersMakeNoDuplicates")
	if start < 0 {
		t.Fatal("the example test is gone from test/testkit/fakesystem/docs_example_test.go")
	}
	end := strings.Index(string(src[start:]), "\n}\n")
	fn := string(src[start : start+end+3])
	doc, err := os.ReadFile(filepath.Join(root, "docs/external.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```go\n"+fn+"```") {
		t.Errorf("docs/external.md does not quote the example test as it is in test/testkit/fakesystem/docs_example_test.go:\n%s", fn)
	}
	if n := strings.Count(fn, "\n"); n > 40 {
		t.Errorf("the example test has %d lines; the docs promise under 40", n)
	}
}
