package server

import (
	"encoding/json"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The Go spec lets an implementation fuse x*y + z into one FMA instruction,
// which rounds once instead of twice; the compiler does so on arm64 (and
// ppc64, s390x, riscv64) but not on amd64, so a fusable float expression in
// the engine can give a run a different digest per CPU. An explicit
// conversion, float64(x*y) + z, rounds the product and forbids the fusion
// ("Arithmetic operators", Go spec). This test type-checks every package
// under engine/ and fails on each float + or - with an unconverted float
// product as an operand, and on each float += or -= of a product.
//
// It checks expressions, not data flow: p := x*y; q := p + z may still be
// fused by the compiler's SSA passes. That case stays a review rule: a
// product that feeds a sum through a variable is converted too,
// p := float64(x*y). server/crosscpu.sh (run by .ci/run) compares amd64 and
// arm64 digests of whole runs and would catch a miss.
func TestNoFusableFloatInEngine(t *testing.T) {
	pkgs := goList(t, "../engine/...")
	exports := map[string]string{}
	for _, p := range goList(t, "-export", "-deps", "../engine/...") {
		exports[p.ImportPath] = p.Export
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		return os.Open(exports[path])
	})
	var found []string
	for _, p := range pkgs {
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
			if err != nil {
				t.Fatalf("parsing %s: %v", name, err)
			}
			files = append(files, f)
		}
		info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
		conf := types.Config{Importer: imp}
		if _, err := conf.Check(p.ImportPath, fset, files, info); err != nil {
			t.Fatalf("type-checking %s: %v", p.ImportPath, err)
		}
		for _, f := range files {
			found = append(found, fusable(fset, info, f)...)
		}
	}
	for _, f := range found {
		t.Errorf("%s: a float product added without float64(): the compiler may fuse it into an FMA on some CPUs", f)
	}
	if len(pkgs) == 0 {
		t.Errorf("go list ../engine/... found no packages")
	}
}

// fusable lists the positions of fusable float expressions in f.
func fusable(fset *token.FileSet, info *types.Info, f *ast.File) []string {
	isFloat := func(e ast.Expr) bool {
		tv, ok := info.Types[e]
		if !ok || tv.Value != nil { // constants are folded exactly
			return false
		}
		b, ok := tv.Type.Underlying().(*types.Basic)
		return ok && b.Info()&types.IsFloat != 0
	}
	product := func(e ast.Expr) bool {
		for {
			p, ok := e.(*ast.ParenExpr)
			if !ok {
				break
			}
			e = p.X
		}
		b, ok := e.(*ast.BinaryExpr)
		return ok && b.Op == token.MUL && isFloat(b)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if (n.Op == token.ADD || n.Op == token.SUB) && isFloat(n) && (product(n.X) || product(n.Y)) {
				out = append(out, fset.Position(n.Pos()).String())
			}
		case *ast.AssignStmt:
			if (n.Tok == token.ADD_ASSIGN || n.Tok == token.SUB_ASSIGN) && len(n.Rhs) == 1 && product(n.Rhs[0]) {
				out = append(out, fset.Position(n.Pos()).String())
			}
		}
		return true
	})
	return out
}

// listedPackage is the part of `go list -json` the checker reads.
type listedPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Export     string
}

func goList(t *testing.T, args ...string) []listedPackage {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json"}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v", strings.Join(args, " "), err)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// The checker itself, on code with and without fusable expressions.
func TestFusableFinds(t *testing.T) {
	const src = `package p
func f(x, y, z float64, i, j, k int) float64 {
	a := x*y + z          // fusable
	b := z - (x * y)      // fusable
	c := float64(x*y) + z // converted: rounded
	d := i*j + k          // integers
	e := 2.0*3.0 + 1.0    // constant
	z += x * y            // fusable
	g := x*y*z            // no addition
	return a + b + c + float64(d) + e + g
}`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	if _, err := (&types.Config{}).Check("p", fset, []*ast.File{f}, info); err != nil {
		t.Fatal(err)
	}
	got := fusable(fset, info, f)
	want := []string{"p.go:3:7", "p.go:4:7", "p.go:8:2"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("fusable = %v, want %v", got, want)
	}
}
