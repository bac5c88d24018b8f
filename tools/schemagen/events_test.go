package main

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"yolop.dev/core/yep"
)

// traceEventParams is the pointer of trace/event's params in schema.json.
const traceEventParams = "/messages/trace~1event/params"

// TestEveryEventPayloadTyped: every event type of yep.Events with a
// payload has its $defs entry and exactly one if/then in TraceEventParams
// that types data by it; a type without one has none, and nothing else is
// constrained.
func TestEveryEventPayloadTyped(t *testing.T) {
	_, doc := loadSchema(t)
	defs := doc.(map[string]any)["$defs"].(map[string]any)
	tep, _ := defs["TraceEventParams"].(map[string]any)
	allOf, _ := tep["allOf"].([]any)
	branches := map[string]string{} // event type → data $ref
	for i, b := range allOf {
		var br struct {
			If struct {
				Properties struct {
					Type struct {
						Const string `json:"const"`
					} `json:"type"`
				} `json:"properties"`
				Required []string `json:"required"`
			} `json:"if"`
			Then struct {
				Properties map[string]map[string]any `json:"properties"`
			} `json:"then"`
		}
		raw, _ := json.Marshal(b)
		if err := json.Unmarshal(raw, &br); err != nil {
			t.Fatalf("allOf[%d]: %v", i, err)
		}
		typ := br.If.Properties.Type.Const
		if typ == "" || !slices.Equal(br.If.Required, []string{"type"}) {
			t.Errorf("allOf[%d] does not select on a required type const: %s", i, raw)
			continue
		}
		if _, dup := branches[typ]; dup {
			t.Errorf("allOf has two branches for %s", typ)
		}
		if len(br.Then.Properties) != 1 {
			t.Errorf("allOf[%d] (%s) constrains %d properties, want data only: %s", i, typ, len(br.Then.Properties), raw)
		}
		ref, _ := br.Then.Properties["data"]["$ref"].(string)
		branches[typ] = ref
	}
	typed := 0
	for _, e := range yep.Events {
		ref, ok := branches[e.Type]
		if e.Data == nil {
			if ok {
				t.Errorf("%s has no payload but schema.json types its data as %s", e.Type, ref)
			}
			continue
		}
		typed++
		name := e.Data.Name()
		def, ok := defs[name].(map[string]any)
		if !ok {
			t.Errorf("$defs lacks %s, the payload of %s", name, e.Type)
		} else if d, _ := def["description"].(string); d == "" {
			t.Errorf("$defs/%s has no description from the Go source", name)
		}
		if want := "#/$defs/" + name; ref != want {
			t.Errorf("trace/event data of %s is typed %q, want %q", e.Type, ref, want)
		}
	}
	if typed == 0 {
		t.Fatal("yep.Events has no event type with a payload")
	}
	if len(branches) != typed {
		t.Errorf("TraceEventParams has %d if/then branches, yep.Events %d types with a payload", len(branches), typed)
	}
}

// TestTraceEventDataValidated: the schema rejects a trace/event whose data
// does not fit its type's payload and accepts one that does, leaving
// payload-less and unknown types unconstrained.
func TestTraceEventDataValidated(t *testing.T) {
	comp, _ := loadSchema(t)
	s := compile(t, comp, traceEventParams)
	for _, tc := range []struct {
		name, msg string
		valid     bool
	}{
		{"tool.completed", `{"type":"tool.completed","data":{"tool":"echo","duration_ms":3.5,"is_error":false,"status":"ok"}}`, true},
		{"tool.completed duration_ms a string", `{"type":"tool.completed","data":{"tool":"echo","duration_ms":"slow","is_error":false,"status":"ok"}}`, false},
		{"tool.completed is_error a string", `{"type":"tool.completed","data":{"tool":"echo","is_error":"no"}}`, false},
		{"tool.completed unknown member", `{"type":"tool.completed","data":{"tool":"echo","duration_ms":1,"x-future":[1]}}`, true},
		{"tool.started tool a number", `{"type":"tool.started","data":{"tool":3}}`, false},
		{"tool.started any args", `{"type":"tool.started","data":{"tool":"bash","args":{"command":"ls"}}}`, true},
		{"hook.fired duration_ms a string", `{"type":"hook.fired","data":{"event":"pre_tool_use","tool":"bash","decision":"allow","duration_ms":"1ms"}}`, false},
		{"llm.generation tokens fractional", `{"type":"llm.generation","data":{"model":"m","input_tokens":1.5}}`, false},
		{"llm.generation finish_reasons a string", `{"type":"llm.generation","data":{"finish_reasons":"stop"}}`, false},
		{"turn.completed data not an object", `{"type":"turn.completed","data":"done"}`, false},
		{"turn.started without data", `{"type":"turn.started"}`, true},
		{"tool.update progress total a string", `{"type":"tool.update","data":{"tool":"t","progress":{"current":1,"total":"ten"}}}`, false},
		{"status.changed text a bool", `{"type":"status.changed","data":{"extension":"e","text":false}}`, false},
		{"session.started has no payload", `{"type":"session.started","data":{"anything":["goes"]}}`, true},
		{"unknown type is open", `{"type":"memory.compacted","data":{"duration_ms":"slow"}}`, true},
		{"unknown type any data", `{"type":"memory.compacted","data":7}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Validate(instance(t, []byte(tc.msg)))
			if tc.valid && err != nil {
				t.Fatalf("valid trace/event rejected: %v\n%s", err, tc.msg)
			}
			if !tc.valid && err == nil {
				t.Fatalf("invalid trace/event accepted:\n%s", tc.msg)
			}
		})
	}
}

// TestEventPayloadsConform encodes, for every event type with a payload, a
// fully populated Go payload as a trace/event and validates it; the same
// event with data of the wrong JSON type is rejected, so every type's
// branch bites.
func TestEventPayloadsConform(t *testing.T) {
	comp, _ := loadSchema(t)
	s := compile(t, comp, traceEventParams)
	for _, e := range yep.Events {
		if e.Data == nil {
			continue
		}
		t.Run(e.Type, func(t *testing.T) {
			v := reflect.New(e.Data).Elem()
			fill(v, e.Data.Name(), "")
			data, err := json.Marshal(v.Interface())
			if err != nil {
				t.Fatal(err)
			}
			good, err := json.Marshal(yep.TraceEventParams{Type: e.Type, SessionID: "s", Data: data})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(instance(t, good)); err != nil {
				t.Fatalf("a %s Go payload does not conform: %v\n%s", e.Type, err, good)
			}
			// What the schema accepts decodes into the payload.
			if _, err := yep.DecodeEventData(e.Type, data); err != nil {
				t.Fatalf("DecodeEventData: %v", err)
			}
			bad := `{"type":"` + e.Type + `","data":[1]}`
			if err := s.Validate(instance(t, []byte(bad))); err == nil {
				t.Fatalf("%s with an array as data accepted", e.Type)
			}
		})
	}
}

// TestMetaListsEvents: meta.json lists every event type of yep.Events in
// order, with its payload's def name, whether it is forwarded as
// trace/event, and its doc; the forwarded ones are trace_event_types.
func TestMetaListsEvents(t *testing.T) {
	type event struct {
		Type    string `json:"type"`
		Data    string `json:"data"`
		Forward bool   `json:"forward"`
		Doc     string `json:"doc"`
	}
	var meta struct {
		Events          []event  `json:"events"`
		TraceEventTypes []string `json:"trace_event_types"`
	}
	if err := json.Unmarshal(generated(t)[MetaPath], &meta); err != nil {
		t.Fatal(err)
	}
	var want []event
	var forwarded []string
	for _, e := range yep.Events {
		ev := event{Type: e.Type, Forward: e.Forward, Doc: e.Doc}
		if e.Data != nil {
			ev.Data = e.Data.Name()
		}
		want = append(want, ev)
		if e.Forward {
			forwarded = append(forwarded, e.Type)
		}
	}
	if diff := cmp.Diff(want, meta.Events); diff != "" {
		t.Errorf("meta events (-yep +meta):\n%s", diff)
	}
	if diff := cmp.Diff(forwarded, meta.TraceEventTypes); diff != "" {
		t.Errorf("forwarded event types vs trace_event_types (-events +meta):\n%s", diff)
	}
	for _, local := range []string{yep.EventToolUpdate, yep.EventStatusChanged, yep.EventConfigChanged, yep.EventWarning, yep.EventExtensionStarted} {
		if slices.Contains(forwarded, local) {
			t.Errorf("%s is session-local but listed as forwarded", local)
		}
	}
}

func TestGenerateRejectsBadEventTable(t *testing.T) {
	type unnamed = struct{ X int }
	for name, tc := range map[string]struct {
		events []yep.EventInfo
		want   string
	}{
		"duplicate type": {[]yep.EventInfo{{Type: "a.b"}, {Type: "a.b"}}, "listed twice"},
		"empty type":     {[]yep.EventInfo{{}}, "no type"},
		"unnamed data":   {[]yep.EventInfo{{Type: "a.b", Data: reflect.TypeFor[unnamed]()}}, "not a named struct"},
		"string data":    {[]yep.EventInfo{{Type: "a.b", Data: reflect.TypeFor[string]()}}, "not a named struct"},
	} {
		in := DefaultInput(&Source{})
		in.Events = tc.events
		if _, err := Generate(in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Generate = %v, want an error containing %q", name, err, tc.want)
		}
	}
	// Typed events need trace/event to type.
	in := DefaultInput(&Source{})
	in.Methods = slices.DeleteFunc(slices.Clone(in.Methods), func(m yep.MethodInfo) bool { return m.Name == yep.MethodTraceEvent })
	if _, err := Generate(in); err == nil || !strings.Contains(err.Error(), "no method reaches TraceEventParams") {
		t.Errorf("Generate without trace/event = %v, want an error naming TraceEventParams", err)
	}
}
