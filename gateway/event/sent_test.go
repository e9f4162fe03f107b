package event

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/veraneural/vera-gateway/fixtures"
)

// TestEveryTypeTheCodeSendsIsDocumented reads the code instead of trusting
// the tables above: every event Type constant this package declares is a
// client type or a server type with a payload in serverPayloads (so
// TestDocsExamples demands a documented example of it); every place in
// production code that sends an event with a literal payload —
// emit(event.TypeX, event.Y{…}) — sends the payload type the docs are
// checked against; and no production code makes an event type from a
// string, so the constants are every type there is.
func TestEveryTypeTheCodeSendsIsDocumented(t *testing.T) {
	root := fixtures.RepoRoot(t)
	fset := token.NewFileSet()
	consts := map[string]Type{} // constant name → value
	own, err := filepath.Glob(filepath.Join(root, "gateway", "event", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range own {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		collectTypeConsts(f, consts)
	}
	sent := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		if rel, _ := filepath.Rel(root, path); filepath.Dir(rel) != filepath.Join("gateway", "event") {
			sent += checkSends(t, fset, f, consts)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d event types declared, %d sends with a literal payload checked", len(consts), sent)
	if len(consts) < len(serverPayloads)+len(clientTypes) || sent < len(serverPayloads)/2 {
		t.Fatalf("found %d Type constants and %d sends: the scan is broken", len(consts), sent)
	}
	for name, typ := range consts {
		_, server := serverPayloads[typ]
		_, client := clientTypes[typ]
		if !server && !client {
			t.Errorf("event.%s (%q) is neither a client type nor in serverPayloads: document it and add it there", name, typ)
		}
	}
}

// collectTypeConsts adds the package's `Name Type = "value"` constants.
func collectTypeConsts(f *ast.File, out map[string]Type) {
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Type" {
				continue
			}
			for i, n := range vs.Names {
				if i < len(vs.Values) {
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
						v, _ := strconv.Unquote(lit.Value)
						out[n.Name] = Type(v)
					}
				}
			}
		}
	}
}

// checkSends checks f's calls that pass an event type constant followed
// by a literal payload, and its conversions to event.Type; it returns how
// many sends it checked.
func checkSends(t *testing.T, fset *token.FileSet, f *ast.File, consts map[string]Type) (n int) {
	t.Helper()
	ast.Inspect(f, func(node ast.Node) bool {
		call, ok := node.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && isEventSel(sel, "Type") {
			t.Errorf("%s: event.Type made from a value; send a declared constant", fset.Position(call.Pos()))
		}
		if len(call.Args) < 2 {
			return true
		}
		typSel, ok := call.Args[0].(*ast.SelectorExpr)
		if !ok || !isEventSel(typSel, "") || !strings.HasPrefix(typSel.Sel.Name, "Type") {
			return true
		}
		payload := call.Args[1]
		if u, ok := payload.(*ast.UnaryExpr); ok && u.Op == token.AND {
			payload = u.X
		}
		lit, ok := payload.(*ast.CompositeLit)
		if !ok {
			return true // a variable: its type is the emitter's business
		}
		litSel, ok := lit.Type.(*ast.SelectorExpr)
		if !ok || !isEventSel(litSel, "") {
			return true
		}
		n++
		mk, ok := serverPayloads[consts[typSel.Sel.Name]]
		if !ok {
			t.Errorf("%s: sends event.%s, which has no documented payload", fset.Position(call.Pos()), typSel.Sel.Name)
			return true
		}
		if want := reflect.TypeOf(mk()).Elem().Name(); want != litSel.Sel.Name {
			t.Errorf("%s: sends event.%s with event.%s; the docs are checked against event.%s", fset.Position(call.Pos()), typSel.Sel.Name, litSel.Sel.Name, want)
		}
		return true
	})
	return n
}

// isEventSel reports whether sel is event.<name> (any name when name is "").
func isEventSel(sel *ast.SelectorExpr, name string) bool {
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == "event" && (name == "" || sel.Sel.Name == name)
}
