// Command tsgen writes the web UI's wire types from the Go ones
// (web/src/api.gen.ts): an interface for every struct the operations of
// internal/api take or return (and the event stream's), a string-literal
// union for every string type with constants (Status, Kind, ...), and the
// table of operations. Types and fields are read by reflection, their doc
// comments and the constants from internal/api's source.
//
//	go run ./internal/tsgen -api internal/api -o web/src/api.gen.ts
//
// `go generate ./internal/api` and scripts/build-web.sh run it; a test
// fails when the committed file is stale.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/corral-dev/corral/internal/api"
)

func main() {
	src := flag.String("api", "internal/api", "the directory of package api's source")
	out := flag.String("o", "web/src/api.gen.ts", "the file to write")
	flag.Parse()
	b, err := generate(*src)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tsgen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "tsgen:", err)
		os.Exit(1)
	}
}

// untyped are the unions of untyped string constants: a field tagged
// ts:"NAME" takes the values of the constants whose names start with the
// prefix.
var untyped = map[string]string{"DialogKind": "Dialog"}

// renamed are Go types whose TypeScript name differs (Event would shadow
// the DOM's).
var renamed = map[string]string{"Event": "CorralEvent"}

// source is what the Go source says that reflection cannot: doc comments
// and constants.
type source struct {
	docs   map[string]string   // "Type" and "Type.Field"
	consts map[string][]string // union name -> values, in source order
}

func readSource(dir string) (*source, error) {
	fset := token.NewFileSet()
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	s := &source{docs: map[string]string{}, consts: map[string][]string{}}
	for _, e := range ents { // ReadDir sorts by name: the output is stable
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		if f.Name.Name != "api" {
			return nil, fmt.Errorf("%s is package %s, not api", name, f.Name.Name)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range g.Specs {
				switch sp := spec.(type) {
				case *ast.TypeSpec:
					text := sp.Doc.Text()
					if text == "" {
						text = g.Doc.Text()
					}
					s.docs[sp.Name.Name] = text
					if st, ok := sp.Type.(*ast.StructType); ok {
						for _, f := range st.Fields.List {
							text := f.Doc.Text()
							if text == "" {
								text = f.Comment.Text()
							}
							for _, n := range f.Names {
								s.docs[sp.Name.Name+"."+n.Name] = text
							}
						}
					}
				case *ast.ValueSpec:
					if g.Tok != token.CONST || len(sp.Values) != len(sp.Names) {
						continue
					}
					for i, n := range sp.Names {
						lit, ok := sp.Values[i].(*ast.BasicLit)
						if !ok || lit.Kind != token.STRING {
							continue
						}
						v, _ := strconv.Unquote(lit.Value)
						union := ""
						if id, ok := sp.Type.(*ast.Ident); ok {
							union = id.Name
						} else if sp.Type == nil {
							for u, prefix := range untyped {
								if strings.HasPrefix(n.Name, prefix) {
									union = u
								}
							}
						}
						if union != "" {
							s.consts[union] = append(s.consts[union], v)
						}
					}
				}
			}
		}
	}
	return s, nil
}

// gen writes the TypeScript.
type gen struct {
	src    *source
	seen   map[reflect.Type]bool
	order  []reflect.Type // structs, in the order first met
	unions map[string]bool
}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
	refType  = reflect.TypeFor[api.SessionRef]()
)

// tsType is the TypeScript of a Go type, queuing the structs it names.
func (g *gen) tsType(t reflect.Type) string {
	switch {
	case t == timeType:
		return "string"
	case t == rawType:
		return "unknown"
	}
	switch t.Kind() {
	case reflect.String:
		if t.Name() != "string" && t.PkgPath() != "" && len(g.src.consts[t.Name()]) > 0 {
			g.unions[t.Name()] = true
			return t.Name()
		}
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Pointer:
		return g.tsType(t.Elem())
	case reflect.Slice:
		return g.tsType(t.Elem()) + "[]"
	case reflect.Array:
		el := g.tsType(t.Elem())
		parts := make([]string, t.Len())
		for i := range parts {
			parts[i] = el
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case reflect.Map:
		return "Record<string, " + g.tsType(t.Elem()) + ">"
	case reflect.Struct:
		if !g.seen[t] {
			g.seen[t] = true
			g.order = append(g.order, t)
		}
		return tsName(t)
	}
	return "unknown"
}

func tsName(t reflect.Type) string {
	if n, ok := renamed[t.Name()]; ok {
		return n
	}
	return t.Name()
}

// field is one property of an interface.
type field struct {
	name, typ, doc string
	optional       bool
}

// fields are a struct's properties. A SessionRef travels in the path, never
// in a body the UI builds: it is left out.
func (g *gen) fields(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type == refType {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			out = append(out, g.fields(f.Type)...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		omit := strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
		typ := g.tsType(f.Type)
		// ts:"NAME" names a union of untyped constants; ts:"'a' | 'b'" is
		// the type itself.
		if u := f.Tag.Get("ts"); u != "" {
			typ = u
			if !strings.ContainsAny(u, "'| ") {
				g.unions[u] = true
			}
		}
		// A nil pointer, slice or map without omitempty is null on the wire.
		if k := f.Type.Kind(); !omit && (k == reflect.Pointer || k == reflect.Slice || k == reflect.Map) && f.Type != rawType {
			typ += " | null"
		}
		out = append(out, field{name: name, typ: typ, doc: g.src.docs[t.Name()+"."+f.Name], optional: omit})
	}
	return out
}

// comment writes a doc comment as JSDoc.
func comment(b *bytes.Buffer, indent, text string) {
	text = strings.ReplaceAll(strings.TrimSpace(text), "*/", "* /")
	if text == "" {
		return
	}
	lines := strings.Split(text, "\n")
	if len(lines) == 1 {
		fmt.Fprintf(b, "%s/** %s */\n", indent, text)
		return
	}
	fmt.Fprintf(b, "%s/**\n", indent)
	for _, l := range lines {
		fmt.Fprintf(b, "%s%s\n", indent, strings.TrimRight(" * "+l, " "))
	}
	fmt.Fprintf(b, "%s */\n", indent)
}

func generate(srcDir string) ([]byte, error) {
	src, err := readSource(srcDir)
	if err != nil {
		return nil, err
	}
	g := &gen{src: src, seen: map[reflect.Type]bool{}, unions: map[string]bool{}}

	type opRow struct {
		info     api.OpInfo
		req, res string
	}
	var ops []opRow
	for _, o := range api.Ops() {
		if o.Path == "" {
			continue // the link's own
		}
		req := "Empty"
		if o.BodyFields() {
			req = g.tsType(o.Request)
		}
		res := "void"
		if o.Result != reflect.TypeFor[api.Empty]() {
			res = g.tsType(o.Result)
		}
		ops = append(ops, opRow{o, req, res})
	}
	g.tsType(reflect.TypeFor[api.Event]()) // the event stream's
	g.tsType(reflect.TypeFor[api.Error]())

	var body bytes.Buffer
	for i := 0; i < len(g.order); i++ { // g.order grows as fields name structs
		t := g.order[i]
		fs := g.fields(t)
		body.WriteString("\n")
		comment(&body, "", src.docs[t.Name()])
		fmt.Fprintf(&body, "export interface %s {\n", tsName(t))
		for _, f := range fs {
			comment(&body, "  ", f.doc)
			opt := ""
			if f.optional {
				opt = "?"
			}
			fmt.Fprintf(&body, "  %s%s: %s;\n", f.name, opt, f.typ)
		}
		body.WriteString("}\n")
	}

	var b bytes.Buffer
	b.WriteString("// Code generated by internal/tsgen from internal/api; DO NOT EDIT.\n")
	b.WriteString("// The wire types of the HTTP+JSON API and its operations (docs/api.md).\n")
	b.WriteString("// Regenerate with `go generate ./internal/api` (scripts/build-web.sh does).\n\n")
	b.WriteString("/** What an operation without a request takes. */\nexport type Empty = Record<string, never>;\n")
	names := make([]string, 0, len(g.unions))
	for u := range g.unions {
		names = append(names, u)
	}
	sort.Strings(names)
	for _, u := range names {
		vals := src.consts[u]
		if len(vals) == 0 {
			return nil, fmt.Errorf("union %s has no constants", u)
		}
		quoted := make([]string, len(vals))
		for i, v := range vals {
			quoted[i] = "'" + v + "'"
		}
		b.WriteString("\n")
		comment(&b, "", src.docs[u])
		fmt.Fprintf(&b, "export type %s = %s;\n", u, strings.Join(quoted, " | "))
	}
	b.Write(body.Bytes())

	b.WriteString("\n/** Every operation with an API route: its HTTP method and path ({id}: the session's id). */\nexport const ops = {\n")
	for _, o := range ops {
		fmt.Fprintf(&b, "  %s: { method: '%s', path: '%s' },\n", o.info.Name, o.info.Method, o.info.Path)
	}
	b.WriteString("} as const;\n\nexport type OpName = keyof typeof ops;\n")
	b.WriteString("\n/** What each operation takes (the body, or a GET's query) and answers. */\nexport interface OpTypes {\n")
	for _, o := range ops {
		comment(&b, "  ", o.info.Doc)
		fmt.Fprintf(&b, "  %s: { req: %s; res: %s };\n", o.info.Name, o.req, o.res)
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}
