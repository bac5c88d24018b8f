package doctor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
)

// checkTypedSchemas grades the input schema a server derived from its
// handler's types (the Go SDK's typed tools, yolop.dev/sdk/typed), which
// the handshake carries as capability_params.tools[].input_schema, against
// the manifest's input_schema for the same tool. The host validates calls
// against the manifest's schema and a typed server refuses arguments its
// types do not accept, so the two must say the same thing: a tool whose
// schemas disagree fails, with the derived schema in the finding to paste
// into plugin.json. A tool whose server derived no schema is not graded;
// one the manifest does not declare is a clamp refusal, reported there.
//
// Two schemas agree when they are equal as JSON values after (see
// [normalSchema]) dropping the annotation keywords (title, description,
// $comment, $schema, examples, default, deprecated, readOnly, writeOnly)
// wherever a schema stands, reading "required" and a "type" list as sets,
// and reading an empty schema {} as true. Everything else counts: a
// keyword one side has and the other lacks (additionalProperties false,
// say) is a disagreement, and so is the order of anyOf or enum.
func (d *run) checkTypedSchemas() {
	var decls []yep.ToolDecl
	if ok, err := d.init.CapabilityParams.Decode(yep.CapTools, &decls); !ok || err != nil {
		return // a malformed handshake is graded by the schema check
	}
	for _, decl := range decls {
		if len(decl.InputSchema) == 0 {
			continue
		}
		i := slices.IndexFunc(d.g.Tools, func(t host.ToolGrant) bool { return t.Name == decl.Name })
		if i < 0 {
			continue
		}
		name := "tool " + decl.Name + " input_schema"
		paste := "paste the derived schema into plugin.json as the tool's input_schema:\n" + indent(decl.InputSchema)
		manifest := d.g.Tools[i].InputSchema
		if len(manifest) == 0 {
			d.r.add(GroupTool, name, Fail, "the server derives the tool's input schema from its Go types, but plugin.json gives the tool no input_schema, so the model is never told the arguments the server accepts; %s", paste)
			continue
		}
		diff, err := schemaDisagreement(manifest, decl.InputSchema)
		switch {
		case err != nil:
			d.r.add(GroupTool, name, Fail, "cannot compare plugin.json's input_schema with the one the server derived: %v; %s", err, paste)
		case diff != "":
			d.r.add(GroupTool, name, Fail, "plugin.json's input_schema disagrees with the one the server derives from its Go types (annotations such as description aside): %s. The host validates calls against plugin.json's schema and the server refuses what its types do not accept; %s", diff, paste)
		default:
			d.r.add(GroupTool, name, Pass, "the input schema the server derives from its Go types agrees with plugin.json's (annotations such as description aside)")
		}
	}
}

// indent is raw pretty-printed with two spaces, or raw when it is not JSON.
func indent(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// schemaDisagreement says where manifest and derived, two JSON Schemas,
// first disagree as "at <JSON pointer> plugin.json says X, the server's
// types say Y", or "" when they agree (see [run.checkTypedSchemas]).
func schemaDisagreement(manifest, derived json.RawMessage) (string, error) {
	var m, g any
	if err := json.Unmarshal(manifest, &m); err != nil {
		return "", fmt.Errorf("plugin.json's input_schema: %w", err)
	}
	if err := json.Unmarshal(derived, &g); err != nil {
		return "", fmt.Errorf("the derived input_schema: %w", err)
	}
	return firstDifference("", normalSchema(m), normalSchema(g)), nil
}

// annotations are the keywords that describe a schema without changing
// what it accepts.
var annotations = map[string]bool{
	"title": true, "description": true, "$comment": true, "$schema": true, "examples": true,
	"default": true, "deprecated": true, "readOnly": true, "writeOnly": true,
}

// Keywords whose value is a schema, an array of schemas, or an object of
// schemas by name.
var (
	schemaKeywords = map[string]bool{
		"items": true, "additionalProperties": true, "not": true, "if": true, "then": true, "else": true,
		"contains": true, "propertyNames": true, "unevaluatedItems": true, "unevaluatedProperties": true,
		"additionalItems": true,
	}
	schemaListKeywords = map[string]bool{"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true, "items": true}
	schemaMapKeywords  = map[string]bool{"properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true}
)

// normalSchema is the schema s with its annotations dropped, "required"
// and a "type" list sorted and deduplicated, and {} as true, wherever a
// schema stands in it; other values are kept as they are.
func normalSchema(s any) any {
	obj, ok := s.(map[string]any)
	if !ok {
		return s // true, false, or not a schema: compared as it is
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		switch {
		case annotations[k]:
			continue
		case k == "required" || k == "type":
			if list, ok := v.([]any); ok {
				v = sortedSet(list)
			}
		case schemaMapKeywords[k]:
			if m, ok := v.(map[string]any); ok {
				n := make(map[string]any, len(m))
				for name, sub := range m {
					n[name] = normalSchema(sub)
				}
				v = n
			}
		case schemaListKeywords[k] && isList(v):
			list := v.([]any)
			n := make([]any, len(list))
			for i, sub := range list {
				n[i] = normalSchema(sub)
			}
			v = n
		case schemaKeywords[k]:
			v = normalSchema(v)
		}
		out[k] = v
	}
	if len(out) == 0 {
		return true
	}
	return out
}

func isList(v any) bool { _, ok := v.([]any); return ok }

// sortedSet sorts a list of JSON values by their encoding and drops
// repeats.
func sortedSet(list []any) []any {
	keyed := map[string]any{}
	for _, v := range list {
		b, _ := json.Marshal(v)
		keyed[string(b)] = v
	}
	keys := slices.Sorted(maps.Keys(keyed))
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = keyed[k]
	}
	return out
}

// firstDifference is where a (plugin.json's) and b (the derived) first
// differ, walking objects in key order, or "" when they are equal.
func firstDifference(at string, a, b any) string {
	here := at
	if here == "" {
		here = "/"
	}
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := slices.Collect(maps.Keys(av))
		for k := range bv {
			if _, dup := av[k]; !dup {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := at + "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
			x, inA := av[k]
			y, inB := bv[k]
			switch {
			case !inA:
				return fmt.Sprintf("at %s plugin.json says nothing, the server's types say %s", p, show(y))
			case !inB:
				return fmt.Sprintf("at %s plugin.json says %s, the server's types say nothing", p, show(x))
			}
			if d := firstDifference(p, x, y); d != "" {
				return d
			}
		}
		return ""
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			break
		}
		for i := range av {
			if d := firstDifference(at+"/"+strconv.Itoa(i), av[i], bv[i]); d != "" {
				return d
			}
		}
		return ""
	default:
		if a == b {
			return ""
		}
	}
	return fmt.Sprintf("at %s plugin.json says %s, the server's types say %s", here, show(a), show(b))
}

// show is v as compact JSON, cut short when long.
func show(v any) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}
