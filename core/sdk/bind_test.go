package sdk

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"yolop.dev/core/internal/jsonfuzz"
)

type echoArgs struct {
	Text string `json:"text"`
}

type namedString string

type mixedArgs struct {
	Path      string      `json:"path"`
	Recursive bool        `json:"recursive,omitempty"`
	Note      namedString `json:"note,omitempty"`
	Skipped   string      `json:"-"`
	hidden    string
}

type upperText string

func (u *upperText) UnmarshalText(b []byte) error {
	*u = upperText(strings.ToUpper(string(b)))
	return nil
}

// The types bindFast must leave to encoding/json.
type (
	untagged struct{ Text string }
	withInt  struct {
		N int `json:"n"`
	}
	quoted struct {
		On bool `json:"on,string"`
	}
	embedding   struct{ echoArgs }
	customField struct {
		U upperText `json:"u"`
	}
)

// duplicateTag is struct{ A, B string } with both tagged json:"x" (made at
// run time: vet rightly refuses the literal), which encoding/json decodes
// into neither.
var duplicateTag = reflect.StructOf([]reflect.StructField{
	{Name: "A", Type: reflect.TypeFor[string](), Tag: `json:"x"`},
	{Name: "B", Type: reflect.TypeFor[string](), Tag: `json:"x"`},
})

func newDuplicateTag() any {
	v := reflect.New(duplicateTag)
	v.Elem().Field(0).SetString("a")
	v.Elem().Field(1).SetString("b")
	return v.Interface()
}

// bindTargets makes a fresh, prefilled value of each target type, so that
// a decoder that clears fields it should leave shows.
func bindTargets() []any {
	return []any{
		&echoArgs{Text: "old"},
		&mixedArgs{Path: "old", Recursive: true, Note: "n", Skipped: "s", hidden: "h"},
		&untagged{Text: "old"}, &withInt{N: 7}, &quoted{On: true}, &embedding{echoArgs{"old"}},
		&customField{U: "old"}, newDuplicateTag(),
	}
}

var bindSeeds = []string{
	`{"text":"hello"}`, `{"text":"` + strings.Repeat("lorem ipsum ", 90) + `"}`, `{}`, `{"text":null}`,
	`{"text":"a","text":"b"}`, `{"text":"esc \" \n"}`, `{"text":"ünï ✓"}`, "{\"text\":\"bad \xff\"}",
	`{"Text":"folded"}`, "{\"te\u017ft\":\"x\"}", `{"te\u0078t":"escaped key"}`, `{"text":1}`, `{"text":true}`,
	`{"other":"unknown"}`, `{"path":"/p","recursive":false,"note":"x"}`, `{"recursive":"yes"}`, `{"recursive":null}`,
	`{"-":"dash"}`, `{"hidden":"h2"}`, `{"n":3}`, `{"on":"false"}`, `{"u":"up"}`, `{"x":"dup"}`, `[1]`, `"str"`, `null`,
	` { "path" : "spaced" , "recursive" : true } `,
}

// checkBind runs bindFast and encoding/json on the same prefilled values
// and fails if the fast path, when it answers, decodes differently.
func checkBind(t *testing.T, args []byte) (fast []string) {
	t.Helper()
	for i, got := range bindTargets() {
		want := bindTargets()[i]
		if !bindFast(args, json.Valid(args), got) {
			if !reflect.DeepEqual(got, bindTargets()[i]) {
				t.Fatalf("bindFast(%q) declined but changed %T to %+v", args, got, got)
			}
			continue
		}
		name := reflect.TypeOf(got).Elem().Name()
		if name == "" {
			name = "duplicateTag"
		}
		fast = append(fast, name)
		if err := json.Unmarshal(args, want); err != nil {
			t.Fatalf("bindFast(%q) decoded %T, which encoding/json refuses: %v", args, got, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("bindFast(%q) into %T = %+v, encoding/json gives %+v", args, got, got, want)
		}
	}
	return fast
}

func TestBindFastMatchesEncodingJSON(t *testing.T) {
	for _, in := range bindSeeds {
		checkBind(t, []byte(in))
	}
	// The common shapes take the fast path; the rest must not.
	for in, want := range map[string]string{
		`{"text":"hello"}`:                    "echoArgs",
		`{"path":"/p","recursive":true}`:      "mixedArgs",
		`{"text":"a","text":"b"}`:             "echoArgs",
		` { "path" : "p" , "note" : null } `:  "mixedArgs",
		`{"text":"esc \" \n"}`:                "",
		`{"Text":"folded"}`:                   "",
		`{"other":"unknown"}`:                 "",
		`{"text":1}`:                          "",
		`{"n":3}`:                             "",
		`{"on":"false"}`:                      "",
		`{"u":"up"}`:                          "",
		`{"x":"dup"}`:                         "",
		`{"text":"` + strings.Repeat("y", 50): "", // not JSON
		`{"text":"a" "text":"b"}`:             "", // not JSON, though the member walker accepts it
	} {
		if got := strings.Join(checkBind(t, []byte(in)), ","); got != want {
			t.Errorf("bindFast(%q) took the fast path for [%s], want [%s]", in, got, want)
		}
	}
}

// TestBindErrorsStayEncodingJSONs checks that arguments the fast path
// declines still get encoding/json's decoding and its error.
func TestBindErrorsStayEncodingJSONs(t *testing.T) {
	c := &ToolCall{Name: "echo", Args: json.RawMessage(`{"text":1}`)}
	var a echoArgs
	err := c.Bind(&a)
	if err == nil || !strings.Contains(err.Error(), `tool "echo": decoding arguments: json: cannot unmarshal number`) {
		t.Fatalf("Bind of a number into a string: %v", err)
	}
	c.Args = json.RawMessage(`{"u":"up"}`)
	var cf customField
	if err := c.Bind(&cf); err != nil || cf.U != "UP" {
		t.Fatalf("Bind with a TextUnmarshaler field = %+v, %v; want the method used", cf, err)
	}
}

func FuzzBindFast(f *testing.F) {
	jsonfuzz.Valid(f, bindSeeds, func(t *testing.T, b []byte) { checkBind(t, b) })
}

func BenchmarkBind(b *testing.B) {
	args := json.RawMessage(`{"text":"` + strings.Repeat("lorem ipsum ", 85) + `"}`)
	for _, side := range []string{"fast", "encoding-json"} {
		b.Run(side, func(b *testing.B) {
			for b.Loop() {
				var a echoArgs
				if side == "fast" {
					if !bindFast(args, true, &a) {
						b.Fatal("declined")
					}
				} else if err := json.Unmarshal(args, &a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
