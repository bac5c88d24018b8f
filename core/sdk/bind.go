package sdk

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"

	"yolop.dev/core/internal/jsonscan"
)

// A bindPlan is how bindFast fills one struct type: its JSON member names
// and, for each, the field and whether it is a bool (else a string).
type bindPlan struct {
	names  []string
	fields []int
	isBool []bool
}

// bindPlans caches the plan of each struct type bindFast has seen; a nil
// plan marks a type it leaves to encoding/json.
var bindPlans sync.Map // reflect.Type → *bindPlan

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// maxFastFields bounds the members bindFast records before it sets them.
const maxFastFields = 16

// bindFast decodes args into v by hand, as json.Unmarshal would, in the
// common case: v points to a struct whose exported fields are strings and
// bools named by plain json tags, and args is an object whose keys name
// those fields exactly, with values that are strings without escapes,
// booleans or null. valid says args are known to be valid JSON (the
// connection validated the message they came in); otherwise bindFast
// checks. It reports false, with v untouched, for anything else,
// which encoding/json then decodes (and words the errors of). Tool
// arguments mostly have this shape, and encoding/json's two passes over a
// long text argument were a fifth of a busy echo server's CPU.
func bindFast(args []byte, valid bool, v any) bool {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return false
	}
	plan := planFor(rv.Elem().Type())
	if plan == nil || !valid && !jsonscan.Valid(args) {
		return false
	}
	type set struct {
		field  int
		str    string
		b      bool
		isBool bool
	}
	var buf [maxFastFields]set
	sets := buf[:0]
	ok := true
	err := jsonscan.Members(args, func(key, val []byte) bool {
		i := plan.index(key)
		if i < 0 || len(sets) == maxFastFields {
			ok = false // a key encoding/json may match by folding, or ignore
			return false
		}
		if string(val) == "null" {
			return true // json.Unmarshal leaves the field as it was
		}
		s := set{field: plan.fields[i], isBool: plan.isBool[i]}
		switch {
		case s.isBool && string(val) == "true":
			s.b = true
		case s.isBool && string(val) == "false":
		case !s.isBool:
			str, end, plain := jsonscan.PlainString(val, 0)
			if !plain || end != len(val) {
				ok = false
				return false
			}
			s.str = string(str)
		default:
			ok = false // a type error: encoding/json words it
			return false
		}
		sets = append(sets, s)
		return true
	})
	if !ok || err != nil {
		return false
	}
	st := rv.Elem()
	for _, s := range sets {
		if s.isBool {
			st.Field(s.field).SetBool(s.b)
		} else {
			st.Field(s.field).SetString(s.str)
		}
	}
	return true
}

// index returns the member named exactly key, or -1. An escaped key is
// never matched: encoding/json decodes it first.
func (p *bindPlan) index(key []byte) int {
	if bytes.IndexByte(key, '\\') >= 0 {
		return -1
	}
	for i, n := range p.names {
		if n == string(key) {
			return i
		}
	}
	return -1
}

// planFor returns t's plan, or nil when encoding/json must decode t.
func planFor(t reflect.Type) *bindPlan {
	if p, ok := bindPlans.Load(t); ok {
		return p.(*bindPlan)
	}
	p := makePlan(t)
	bindPlans.Store(t, p)
	return p
}

func makePlan(t reflect.Type) *bindPlan {
	if customDecoding(t) {
		return nil
	}
	p := new(bindPlan)
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return nil // embedded fields follow encoding/json's promotion rules
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			return nil // matched by the Go name, case-insensitively
		}
		if !plainName(name) || hasOption(opts, "string") || customDecoding(f.Type) {
			return nil
		}
		switch f.Type.Kind() {
		case reflect.String, reflect.Bool:
		default:
			return nil
		}
		for _, n := range p.names {
			if n == name {
				return nil // duplicate names: encoding/json drops both
			}
		}
		p.names = append(p.names, name)
		p.fields = append(p.fields, i)
		p.isBool = append(p.isBool, f.Type.Kind() == reflect.Bool)
	}
	if len(p.names) == 0 || len(p.names) > maxFastFields {
		return nil
	}
	return p
}

// customDecoding reports whether encoding/json would decode t, or a
// pointer to it, with its own method.
func customDecoding(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(jsonUnmarshaler) || pt.Implements(jsonUnmarshaler) ||
		t.Implements(textUnmarshaler) || pt.Implements(textUnmarshaler)
}

// plainName reports whether a tag name is letters, digits, '_' and '-'
// only: a name encoding/json takes as it is.
func plainName(name string) bool {
	for _, c := range []byte(name) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func hasOption(opts, want string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == want {
			return true
		}
	}
	return false
}
