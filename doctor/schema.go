package doctor

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"yolop.dev/core/yep"
)

// SchemaJSON is the YEP wire schema every message is validated against: a
// byte-identical copy of schema/yep/v1/schema.json, which lives outside
// this module and so cannot be embedded from its own place. A test fails
// when the two differ; copy the repository file over this one after
// regenerating it with tools/schemagen.
//
//go:embed schema.json
var SchemaJSON []byte

const schemaID = "https://yolop.dev/schema/yep/v1/schema.json"

// schemas holds the compiled schema of every method's params and result
// and of the shared error object. It is immutable once built.
type schemas struct {
	params map[string]*jsonschema.Schema
	result map[string]*jsonschema.Schema
	error  *jsonschema.Schema
}

// compiledSchemas compiles SchemaJSON once; the result is never modified.
var compiledSchemas = sync.OnceValues(func() (*schemas, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(SchemaJSON))
	if err != nil {
		return nil, fmt.Errorf("embedded YEP schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(jsonschema.SchemeURLLoader{}) // never the network or the disk
	if err := c.AddResource(schemaID, doc); err != nil {
		return nil, fmt.Errorf("embedded YEP schema: %w", err)
	}
	s := &schemas{params: map[string]*jsonschema.Schema{}, result: map[string]*jsonschema.Schema{}}
	ptr := func(m string) string { return schemaID + "#/messages/" + strings.ReplaceAll(m, "/", "~1") }
	for _, m := range yep.Methods {
		if s.params[m.Name], err = c.Compile(ptr(m.Name) + "/params"); err != nil {
			return nil, fmt.Errorf("embedded YEP schema: %s params: %w", m.Name, err)
		}
		if m.Kind == yep.Request {
			if s.result[m.Name], err = c.Compile(ptr(m.Name) + "/result"); err != nil {
				return nil, fmt.Errorf("embedded YEP schema: %s result: %w", m.Name, err)
			}
		}
	}
	if s.error, err = c.Compile(schemaID + "#/error"); err != nil {
		return nil, fmt.Errorf("embedded YEP schema: error: %w", err)
	}
	return s, nil
})

// validate checks raw (a params, result or error payload) against sch and
// returns one line per leaf violation, "at /path: what was expected". An
// absent payload is validated as {} (the protocol treats it so).
func validate(sch *jsonschema.Schema, raw json.RawMessage) []string {
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return []string{fmt.Sprintf("not valid JSON: %v", err)}
	}
	err = sch.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{err.Error()}
	}
	p := message.NewPrinter(language.English)
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, fmt.Sprintf("at /%s: %s", strings.Join(e.InstanceLocation, "/"), e.ErrorKind.LocalizedString(p)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.Sort(out)
	return slices.Compact(out)
}
