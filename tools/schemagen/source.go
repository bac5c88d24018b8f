package main

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
)

// Source is what the generator learns from the text of core/yep that
// reflection cannot see: doc comments and the constants of the package.
type Source struct {
	// TypeDocs maps a type name to its doc comment, as one line.
	TypeDocs map[string]string
	// FieldDocs maps "Type.GoField" to the field's doc comment.
	FieldDocs map[string]string
	// Strings and Ints map a constant's name to its value.
	Strings map[string]string
	Ints    map[string]int64
}

// ParseSource reads the non-test Go files of dir (core/yep) that a build
// with tags compiles: a file whose //go:build constraint (or _GOOS/_GOARCH
// name) excludes it is skipped, so the docs read are those of the types
// compiled in — without [UnstableTag] a yep_unstable file is skipped and
// its !yep_unstable counterpart read, with it the other way round.
func ParseSource(dir string, tags ...string) (*Source, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	bctx := build.Default
	bctx.BuildTags = tags
	src := &Source{
		TypeDocs:  map[string]string{},
		FieldDocs: map[string]string{},
		Strings:   map[string]string{},
		Ints:      map[string]int64{},
	}
	fset := token.NewFileSet()
	n := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		match, err := bctx.MatchFile(dir, filepath.Base(name))
		if err != nil {
			return nil, fmt.Errorf("reading the build constraints of %s: %w", name, err)
		}
		if !match {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parsing the wire types in %s: %w", name, err)
		}
		n++
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			switch gd.Tok {
			case token.TYPE:
				src.addTypes(gd)
			case token.CONST:
				src.addConsts(gd)
			}
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("no Go files in %s: is -root the repository root?", dir)
	}
	return src, nil
}

func (s *Source) addTypes(gd *ast.GenDecl) {
	for _, spec := range gd.Specs {
		ts := spec.(*ast.TypeSpec)
		doc := ts.Doc
		if doc == nil && len(gd.Specs) == 1 {
			doc = gd.Doc
		}
		if d := oneLine(doc); d != "" {
			s.TypeDocs[ts.Name.Name] = d
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			continue
		}
		for _, f := range st.Fields.List {
			d := oneLine(f.Doc)
			if d == "" {
				d = oneLine(f.Comment)
			}
			if d == "" {
				continue
			}
			for _, name := range f.Names {
				s.FieldDocs[ts.Name.Name+"."+name.Name] = d
			}
		}
	}
}

func (s *Source) addConsts(gd *ast.GenDecl) {
	for _, spec := range gd.Specs {
		vs := spec.(*ast.ValueSpec)
		for i, name := range vs.Names {
			if i >= len(vs.Values) {
				continue
			}
			v := vs.Values[i]
			neg := false
			if u, ok := v.(*ast.UnaryExpr); ok && u.Op == token.SUB {
				neg, v = true, u.X
			}
			lit, ok := v.(*ast.BasicLit)
			if !ok {
				continue
			}
			switch lit.Kind {
			case token.STRING:
				if str, err := strconv.Unquote(lit.Value); err == nil {
					s.Strings[name.Name] = str
				}
			case token.INT:
				if n, err := strconv.ParseInt(lit.Value, 0, 64); err == nil {
					if neg {
						n = -n
					}
					s.Ints[name.Name] = n
				}
			}
		}
	}
}

// oneLine flattens a comment group into one line of prose.
func oneLine(cg *ast.CommentGroup) string {
	if cg == nil {
		return ""
	}
	return strings.Join(strings.Fields(cg.Text()), " ")
}
