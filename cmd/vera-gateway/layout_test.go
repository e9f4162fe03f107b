package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/fixtures"
)

const modulePath = "github.com/veraneural/vera-gateway"

// leakGuard matches a package's tests calling goleak (spelled in parts so
// that this file does not count as a guard).
var leakGuard = regexp.MustCompile(`goleak` + `\.(Verify|Find)`)

// goPackage is one directory's non-test files, parsed.
type goPackage struct {
	dir        string // relative to the repo root, slash-separated
	fset       *token.FileSet
	files      []*ast.File
	hasDoc     bool
	startsGo   bool
	testsLeaks bool
}

func repoRoot(t *testing.T) string {
	t.Helper()
	return fixtures.RepoRoot(t)
}

func loadPackages(t *testing.T) map[string]*goPackage {
	t.Helper()
	root := repoRoot(t)
	pkgs := map[string]*goPackage{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		p := pkgs[rel]
		if p == nil {
			p = &goPackage{dir: rel, fset: fset}
			pkgs[rel] = p
		}
		if strings.HasSuffix(path, "_test.go") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if leakGuard.Match(b) {
				p.testsLeaks = true
			}
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		p.files = append(p.files, f)
		if f.Doc != nil && strings.HasPrefix(strings.TrimSpace(f.Doc.Text()), "Package "+f.Name.Name) ||
			f.Name.Name == "main" && f.Doc != nil && strings.HasPrefix(strings.TrimSpace(f.Doc.Text()), "Command ") {
			p.hasDoc = true
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if _, ok := n.(*ast.GoStmt); ok {
				p.startsGo = true
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir, p := range pkgs {
		if len(p.files) == 0 {
			delete(pkgs, dir) // test-only directory
		}
	}
	return pkgs
}

func imports(p *goPackage) []string {
	var out []string
	for _, f := range p.files {
		for _, im := range f.Imports {
			s, _ := strconv.Unquote(im.Path.Value)
			out = append(out, s)
		}
	}
	return out
}

func under(dir, top string) bool { return dir == top || strings.HasPrefix(dir, top+"/") }

// TestImportDirection enforces BRIEF §2: the media, device, card and safety
// packages never import gateway; audio and safety make no network calls;
// only tests and vera-replay import fixtures.
func TestImportDirection(t *testing.T) {
	pkgs := loadPackages(t)
	if len(pkgs) < 5 {
		t.Fatalf("found only %d packages; the walk is broken", len(pkgs))
	}
	networked := []string{"net", "net/http", "net/rpc", "github.com/pion/ice", "github.com/pion/webrtc/v4", "github.com/coder/websocket"}
	for dir, p := range pkgs {
		for _, im := range imports(p) {
			for _, top := range []string{"audio", "devices", "glasses", "safety"} {
				if under(dir, top) && strings.HasPrefix(im, modulePath+"/gateway") {
					t.Errorf("%s imports %s: %s must never import gateway", dir, im, top)
				}
			}
			for _, top := range []string{"audio", "safety"} {
				if !under(dir, top) {
					continue
				}
				for _, n := range networked {
					if im == n || strings.HasPrefix(im, n+"/") && !strings.HasPrefix(im, "github.com/pion/webrtc/v4/pkg/media") {
						t.Errorf("%s imports %s: %s must not touch the network", dir, im, top)
					}
				}
			}
			if strings.HasPrefix(im, modulePath+"/fixtures") && !under(dir, "fixtures") && dir != "cmd/vera-replay" {
				t.Errorf("%s imports %s: only tests and cmd/vera-replay may import fixtures", dir, im)
			}
		}
	}
}

// TestPackageDocs: every package says what it owns.
func TestPackageDocs(t *testing.T) {
	for dir, p := range loadPackages(t) {
		if !p.hasDoc {
			t.Errorf("package in %s has no package doc comment (\"// Package x …\" or \"// Command x …\")", dir)
		}
	}
}

// longFuncOK are the functions allowed over 100 lines: measured hot-path
// kernels that must stay at 0 allocations (STYLE.md).
var longFuncOK = map[string]bool{"audio/vad.ProcessFeatures": true}

// TestNoLongFunctions: no function outside tests is longer than 100 lines,
// so each says one thing; a long one is split, not excused.
func TestNoLongFunctions(t *testing.T) {
	for dir, p := range loadPackages(t) {
		for _, f := range p.files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				n := p.fset.Position(fd.End()).Line - p.fset.Position(fd.Pos()).Line + 1
				if n > 100 && !longFuncOK[dir+"."+fd.Name.Name] {
					t.Errorf("%s: %s is %d lines (at most 100 outside tests)", p.fset.Position(fd.Pos()), fd.Name.Name, n)
				}
			}
		}
	}
}

// TestGoroutineLeakGuards: a package that starts goroutines checks for
// leaks in its tests (goleak).
func TestGoroutineLeakGuards(t *testing.T) {
	for dir, p := range loadPackages(t) {
		if p.startsGo && !p.testsLeaks {
			t.Errorf("package in %s starts goroutines but its tests do not use goleak", dir)
		}
	}
}
