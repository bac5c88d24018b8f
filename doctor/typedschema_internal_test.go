package doctor

import (
	"strings"
	"testing"
)

// What "disagree" means: the schemas differ once annotations are dropped
// and required and type lists are read as sets.
func TestSchemaDisagreement(t *testing.T) {
	for _, tc := range []struct {
		name, manifest, derived string
		where                   string // "" when they agree
	}{
		{"same", `{"type":"object"}`, `{"type":"object"}`, ""},
		{"annotations", `{"type":"object","title":"T","description":"d","$schema":"https://json-schema.org/draft/2020-12/schema","$comment":"c","examples":[{}],"default":{},"deprecated":false,"readOnly":false,"writeOnly":false}`, `{"type":"object"}`, ""},
		{"nested annotations", `{"properties":{"a":{"type":"string","description":"x"}},"items":{"title":"i"}}`, `{"properties":{"a":{"type":"string"}},"items":{}}`, ""},
		{"required as a set", `{"required":["b","a","a"]}`, `{"required":["a","b"]}`, ""},
		{"type as a set", `{"type":["array","null"]}`, `{"type":["null","array"]}`, ""},
		{"numbers by value", `{"minimum":1.0}`, `{"minimum":1}`, ""},
		{"a property called description", `{"properties":{"description":{"type":"string"}}}`, `{"properties":{}}`, "/properties/description"},
		{"a property called title in required", `{"required":["title"]}`, `{"required":[]}`, "/required"},
		{"other keyword", `{"type":"object","minProperties":1}`, `{"type":"object"}`, "/minProperties"},
		{"nested type", `{"properties":{"a":{"items":{"type":"integer"}}}}`, `{"properties":{"a":{"items":{"type":"number"}}}}`, "/properties/a/items/type"},
		{"anyOf order counts", `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `{"anyOf":[{"type":"integer"},{"type":"string"}]}`, "/anyOf/0/type"},
		{"enum order counts", `{"enum":["a","b"]}`, `{"enum":["b","a"]}`, "/enum/0"},
		{"true is {}", `{"additionalProperties":{"description":"anything"},"properties":{"x":{}}}`, `{"additionalProperties":true,"properties":{"x":true}}`, ""},
		{"false is not {}", `{"additionalProperties":{}}`, `{"additionalProperties":false}`, "/additionalProperties"},
		{"missing keyword", `{"type":"object"}`, `{"type":"object","additionalProperties":false}`, "/additionalProperties"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := schemaDisagreement([]byte(tc.manifest), []byte(tc.derived))
			if err != nil {
				t.Fatal(err)
			}
			if tc.where == "" {
				if d != "" {
					t.Errorf("disagreement %q; want none", d)
				}
				return
			}
			if !strings.HasPrefix(d, "at "+tc.where+" ") {
				t.Errorf("disagreement %q; want it at %s", d, tc.where)
			}
		})
	}
}
