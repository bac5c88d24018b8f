// Package json is core's one path for encoding and decoding protocol
// messages. It wraps encoding/json with two differences that match
// encoding/json/v2's defaults, so core can switch to v2 by changing this
// package alone:
//
//   - [Marshal] does not escape <, > and & for HTML.
//   - [Unmarshal] matches object keys to struct fields case-sensitively:
//     a key that differs from a field's JSON name only in case is an
//     error instead of silently filling the field.
//
// Case-insensitive matching lets two parsers read one message two ways
// (a peer sending both "name" and "Name" gets whichever the reader
// prefers), which is why the MCP Go SDK turned it off for security.
package json

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// A RawMessage is a raw encoded JSON value; see [encoding/json.RawMessage].
type RawMessage = json.RawMessage

// Valid reports whether data is a valid JSON encoding.
func Valid(data []byte) bool { return json.Valid(data) }

// Marshal returns the JSON encoding of v, as [encoding/json.Marshal]
// does but without HTML escaping.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Unmarshal parses the JSON-encoded data and stores the result in the
// value pointed to by v, as [encoding/json.Unmarshal] does, except that
// an object key that matches a struct field's JSON name only when case
// is ignored is an error, and leaves v unchanged. Unknown keys are
// ignored as before, and map keys are taken as they are.
func Unmarshal(data []byte, v any) error {
	if err := checkCase(data, reflect.TypeOf(v)); err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// checkCase walks JSON data alongside type t and reports the first object
// key that would fill a struct field only by folding case, or the syntax
// error that json.Unmarshal would report.
func checkCase(data []byte, t reflect.Type) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil // decoded by its own method, or nothing to check
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		if data[0] != '{' {
			return nil
		}
		var members map[string]json.RawMessage
		if err := json.Unmarshal(data, &members); err != nil {
			return err
		}
		if t.Kind() == reflect.Map {
			for _, val := range members {
				if err := checkCase(val, t.Elem()); err != nil {
					return err
				}
			}
			return nil
		}
		fields := fieldsOf(t)
		for key, val := range members {
			if ft, ok := fields[key]; ok {
				if err := checkCase(val, ft); err != nil {
					return err
				}
				continue
			}
			for name := range fields {
				if strings.EqualFold(key, name) {
					return fmt.Errorf("json: key %q does not match field %q of %s: keys are case-sensitive", key, name, t)
				}
			}
		}
	case reflect.Slice, reflect.Array:
		if data[0] != '[' {
			return nil
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(data, &elems); err != nil {
			return err
		}
		for _, e := range elems {
			if err := checkCase(e, t.Elem()); err != nil {
				return err
			}
		}
	}
	return nil
}

// fieldsOf returns the JSON names of t's fields, with their types, the
// way encoding/json names them: the tag's name, else the Go name, with
// the fields of untagged embedded structs promoted.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for n, typ := range fieldsOf(ft) {
					if _, ok := fields[n]; !ok {
						fields[n] = typ
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = ft
	}
	return fields
}
