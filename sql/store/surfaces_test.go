package store_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/sql/store"
)

// coreOnly are the core's primitives the seams share: its statements, pool,
// transactions, audit writer and keys. A surface that opened its own
// transaction, ran its own statement or wrote its own audit entry would step
// around the store's rules.
var coreOnly = []string{"Q", "Pool", "InTx", "Audit", "RecordChange", "ServerKeys"}

// TestAccessorsExposeNoPrimitive: a surface reaches the domain only through
// Store's accessors (Store has no exported field), and no accessor's type
// has a primitive of the core among its methods or exported fields, so no
// surface can compile a call to one.
func TestAccessorsExposeNoPrimitive(t *testing.T) {
	st := reflect.TypeFor[*store.Store]()
	for i := range st.Elem().NumField() {
		if f := st.Elem().Field(i); f.IsExported() {
			t.Errorf("Store has the exported field %s", f.Name)
		}
	}
	if st.NumMethod() < 9 {
		t.Fatalf("Store has %d accessors; the test is looking at the wrong type", st.NumMethod())
	}
	for i := range st.NumMethod() {
		m := st.Method(i)
		if m.Type.NumIn() != 1 || m.Type.NumOut() != 1 {
			continue // not an accessor
		}
		seam := m.Type.Out(0)
		for _, name := range coreOnly {
			if _, ok := seam.MethodByName(name); ok {
				t.Errorf("s.%s() has the core's %s", m.Name, name)
			}
			if seam.Kind() == reflect.Pointer && seam.Elem().Kind() == reflect.Struct {
				if f, ok := seam.Elem().FieldByName(name); ok && f.IsExported() {
					t.Errorf("s.%s() has the core's field %s", m.Name, name)
				}
			}
		}
		if seam.Kind() == reflect.Pointer && seam.Elem().Kind() == reflect.Struct {
			for j := range seam.Elem().NumField() {
				if f := seam.Elem().Field(j); f.IsExported() {
					t.Errorf("s.%s() has the exported field %s", m.Name, f.Name)
				}
			}
		}
	}
}

// TestSurfacesMakeNoActor: the API, the pages, the SDK endpoints and the
// server's assembly never make an Actor themselves (only the store resolves
// one, with the statements it granted). The type is exported, for the
// seams, so this test keeps the surfaces from building one.
func TestSurfacesMakeNoActor(t *testing.T) {
	var files []string
	for _, dir := range []string{"../../api", "../../web", "../../cmd"} {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(files) < 50 {
		t.Fatalf("found %d surface files; the walk is looking in the wrong place", len(files))
	}
	fset := token.NewFileSet()
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if n, ok := n.(*ast.CompositeLit); ok {
				if sel, ok := n.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Actor" {
					if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "core" {
						t.Errorf("%s: a surface makes its own core.Actor", fset.Position(n.Pos()))
					}
				}
			}
			return true
		})
	}
}
