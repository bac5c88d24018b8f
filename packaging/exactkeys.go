package packaging

import (
	"encoding/json"
	"reflect"
	"strings"
)

// exactKeys returns a copy of the decoded JSON value v keeping, in every
// object that maps onto a Go struct of type t, only the keys that equal a
// field's JSON name exactly. encoding/json matches keys case-insensitively,
// so without this a "TOOLS" key the schema never validated could overwrite
// "tools" (reference item 44). Free-form values (json.RawMessage, maps of
// strings) are kept as they are.
func exactKeys(v any, t reflect.Type) any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case reflect.TypeFor[Prompt]():
		t = reflect.TypeFor[promptJSON]()
	case reflect.TypeFor[json.RawMessage]():
		return v
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		out := map[string]any{}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if val, ok := m[name]; ok {
				out[name] = exactKeys(val, f.Type)
			}
		}
		return out
	case reflect.Slice:
		a, ok := v.([]any)
		if !ok {
			return v
		}
		out := make([]any, len(a))
		for i, e := range a {
			out[i] = exactKeys(e, t.Elem())
		}
		return out
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		out := make(map[string]any, len(m))
		for k, e := range m {
			out[k] = exactKeys(e, t.Elem())
		}
		return out
	}
	return v
}
