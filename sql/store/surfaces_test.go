package store_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// coreOnly are the core's primitives the seams share. Go cannot hide them
// from the surfaces (they are exported for sibling packages, and Store
// embeds the core), so this test does: a surface that opened its own
// transaction, ran its own statement or wrote its own audit entry would
// step around the store's rules.
var coreOnly = map[string]bool{"Q": true, "Pool": true, "InTx": true, "Audit": true, "RecordChange": true, "ServerKeys": true}

// TestSurfacesCallOnlyTheDomain: the API, the pages, the SDK endpoints and
// the server's assembly call the store's operations, never the core's
// primitives, and never make an Actor themselves (only the store resolves
// one, with the statements it granted).
func TestSurfacesCallOnlyTheDomain(t *testing.T) {
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
		imported := map[string]bool{}
		for _, imp := range f.Imports {
			name := strings.Trim(imp.Path.Value, `"`)
			name = name[strings.LastIndex(name, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			imported[name] = true
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if pkg, ok := n.X.(*ast.Ident); ok && imported[pkg.Name] {
					return true // a package's name (pgxpool.Pool), not a store's field
				}
				if coreOnly[n.Sel.Name] {
					t.Errorf("%s: a surface uses the core's %s", fset.Position(n.Pos()), n.Sel.Name)
				}
			case *ast.CompositeLit:
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
