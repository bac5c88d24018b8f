package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/tools/txtar"

	"yolop.dev/core/yep"
)

// The conformance corpus, schema/yep/v1/conformance/, holds one txtar file
// per method (the method name with "/" as "_"), plus error.txtar and
// capability_params.txtar. Each section is one JSON payload named
// "<params|result>/<valid|invalid>/<case>.json" (for the two shapes,
// "<valid|invalid>/<case>.json"). It is language-neutral: SDKs in any
// language can run the same cases against their own types.

const conformanceDir = "schema/yep/v1/conformance"

type corpusCase struct {
	file, name string
	part       string // "params", "result" or "" for the shapes
	valid      bool
	data       []byte
}

func loadCorpus(t *testing.T) map[string][]corpusCase {
	t.Helper()
	dir := filepath.Join(repoRoot(t), filepath.FromSlash(conformanceDir))
	files, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no conformance files in %s (%v)", dir, err)
	}
	out := map[string][]corpusCase{}
	for _, f := range files {
		ar, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		base := strings.TrimSuffix(filepath.Base(f), ".txtar")
		if len(bytes.TrimSpace(ar.Comment)) == 0 {
			t.Errorf("%s has no prose header saying what it covers", f)
		}
		for _, s := range ar.Files {
			c, err := parseCaseName(base, s.Name)
			if err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			c.data = s.Data
			if !json.Valid(s.Data) {
				t.Errorf("%s: section %s is not JSON", f, s.Name)
				continue
			}
			out[base] = append(out[base], c)
		}
	}
	return out
}

func parseCaseName(file, name string) (corpusCase, error) {
	c := corpusCase{file: file}
	parts := strings.Split(strings.TrimSuffix(name, ".json"), "/")
	if !strings.HasSuffix(name, ".json") {
		return c, fmt.Errorf("section %q: names end in .json", name)
	}
	if len(parts) == 3 {
		c.part, parts = parts[0], parts[1:]
		if c.part != "params" && c.part != "result" {
			return c, fmt.Errorf("section %q: want params/ or result/", name)
		}
	}
	if len(parts) != 2 || (parts[0] != "valid" && parts[0] != "invalid") || parts[1] == "" {
		return c, fmt.Errorf("section %q: want [params|result/]valid|invalid/<case>.json", name)
	}
	c.valid = parts[0] == "valid"
	c.name = name
	return c, nil
}

func methodFile(method string) string { return strings.ReplaceAll(method, "/", "_") }

func instance(t *testing.T, b []byte) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestConformanceCorpus checks every example against the schema: valid
// ones validate and decode into the Go type, invalid ones are rejected.
func TestConformanceCorpus(t *testing.T) {
	c := loadCorpus(t)
	comp, _ := loadSchema(t)
	pointer := func(file, part string) (string, reflect.Type) {
		switch file {
		case "error":
			return "/error", reflect.TypeFor[yep.Error]()
		case "capability_params":
			return "/capability_params", reflect.TypeFor[yep.CapabilityParams]()
		}
		for _, m := range yep.Methods {
			if methodFile(m.Name) == file {
				ptr := "/messages/" + strings.ReplaceAll(m.Name, "/", "~1") + "/" + part
				if part == "params" {
					return ptr, m.Params
				}
				return ptr, m.Result
			}
		}
		return "", nil
	}
	for file, cases := range c {
		for _, tc := range cases {
			t.Run(file+"/"+tc.name, func(t *testing.T) {
				ptr, typ := pointer(file, tc.part)
				if typ == nil {
					t.Fatalf("%s.txtar: no method %q, or a %s section for a notification", file, file, tc.part)
				}
				if (file == "error" || file == "capability_params") != (tc.part == "") {
					t.Fatalf("section %s: methods use params/ and result/ prefixes, the shapes none", tc.name)
				}
				err := compile(t, comp, ptr).Validate(instance(t, tc.data))
				if tc.valid && err != nil {
					t.Fatalf("valid example rejected by %s: %v\n%s", ptr, err, tc.data)
				}
				if !tc.valid && err == nil {
					t.Fatalf("invalid example accepted by %s:\n%s", ptr, tc.data)
				}
				if tc.valid {
					// The Go side accepts what the schema accepts.
					if err := json.Unmarshal(tc.data, reflect.New(typ).Interface()); err != nil {
						t.Fatalf("valid example does not decode into %v: %v", typ, err)
					}
				}
			})
		}
	}
}

// TestConformanceCoverage: every method has valid params, every request a
// valid result, and every file at least one invalid case.
func TestConformanceCoverage(t *testing.T) {
	corpus := loadCorpus(t)
	count := func(file, part string, valid bool) int {
		n := 0
		for _, c := range corpus[file] {
			if c.part == part && c.valid == valid {
				n++
			}
		}
		return n
	}
	for _, m := range yep.Methods {
		f := methodFile(m.Name)
		if count(f, "params", true) == 0 {
			t.Errorf("%s/%s.txtar: no valid params example for %s", conformanceDir, f, m.Name)
		}
		if m.Kind == yep.Request && count(f, "result", true) == 0 {
			t.Errorf("%s/%s.txtar: no valid result example for %s", conformanceDir, f, m.Name)
		}
		if count(f, "params", false)+count(f, "result", false) == 0 {
			t.Errorf("%s/%s.txtar: no invalid example for %s", conformanceDir, f, m.Name)
		}
	}
	for _, f := range []string{"error", "capability_params"} {
		if count(f, "", true) == 0 || count(f, "", false) == 0 {
			t.Errorf("%s/%s.txtar needs valid and invalid examples", conformanceDir, f)
		}
	}
}

// TestGoValuesConform encodes a fully populated Go value of every type in
// $defs with encoding/json and validates it against its definition: what
// the Go side sends is what the schema says.
func TestGoValuesConform(t *testing.T) {
	comp, doc := loadSchema(t)
	g := &generator{in: DefaultInput(&Source{}), defs: map[string]any{}, names: map[string]reflect.Type{}, used: map[string]bool{}}
	if _, err := g.schema(); err != nil {
		t.Fatal(err)
	}
	defs := doc.(map[string]any)["$defs"].(map[string]any)
	if len(g.names) != len(defs) {
		t.Errorf("generator knows %d types, schema.json has %d", len(g.names), len(defs))
	}
	for name, typ := range g.names {
		t.Run(name, func(t *testing.T) {
			v := reflect.New(typ).Elem()
			fill(v, typ.Name(), "")
			b, err := json.Marshal(v.Interface())
			if err != nil {
				t.Fatal(err)
			}
			if err := compile(t, comp, "/$defs/"+name).Validate(instance(t, b)); err != nil {
				t.Fatalf("encoded %s does not conform: %v\n%s", name, err, b)
			}
			// And it round-trips.
			back := reflect.New(typ)
			if err := json.Unmarshal(b, back.Interface()); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back.Elem().Interface(), v.Interface()) {
				t.Errorf("%s does not round-trip:\n got %#v\nwant %#v", name, back.Elem().Interface(), v.Interface())
			}
		})
	}
}

// fill sets every field of v to a non-zero value, using an enum's first
// value where the schema has one. key is "Type.json_name" of the field.
func fill(v reflect.Value, typeName, key string) {
	t := v.Type()
	switch {
	case t == rawType:
		v.SetBytes([]byte(`{"k":[1,"v",true]}`))
		return
	case t == idType:
		v.Set(reflect.ValueOf(yep.IntID(7)))
		return
	case t == capsType:
		v.Set(reflect.ValueOf(yep.Capabilities{yep.CapTools, "x-future"}))
		return
	case t == capParamsType:
		v.Set(reflect.ValueOf(yep.CapabilityParams{
			yep.CapTools:  json.RawMessage(`[{"name":"echo"}]`),
			yep.CapPrompt: json.RawMessage(`{"static":"s","dynamic":true}`),
			"x-future":    json.RawMessage(`{"any":1}`),
		}))
		return
	}
	switch t.Kind() {
	case reflect.String:
		if e, ok := Enums[key]; ok {
			v.SetString(e.Values[len(e.Values)-1])
		} else {
			v.SetString("text of " + key)
		}
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(3)
	case reflect.Float64, reflect.Float32:
		v.SetFloat(1.5)
	case reflect.Pointer:
		v.Set(reflect.New(t.Elem()))
		fill(v.Elem(), t.Elem().Name(), key)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(t, 1, 1))
		fill(v.Index(0), typeName, key)
	case reflect.Map:
		m := reflect.MakeMap(t)
		e := reflect.New(t.Elem()).Elem()
		fill(e, typeName, key)
		m.SetMapIndex(reflect.ValueOf("K"), e)
		v.Set(m)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			fill(v.Field(i), t.Name(), t.Name()+"."+name)
		}
	}
}
