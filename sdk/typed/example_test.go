package typed_test

import (
	"context"
	"fmt"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/sdk"
	"yolop.dev/sdk/typed"
)

type GreetArgs struct {
	Name  string `json:"name" jsonschema:"who to greet"`
	Shout bool   `json:"shout,omitempty"`
}

type Greeting struct {
	Text string `json:"text"`
}

func (g Greeting) String() string { return g.Text }

// A typed tool: the arguments arrive decoded (and validated against the
// schema derived from GreetArgs); the result's data is Greeting as JSON,
// its output Greeting's String.
func ExampleAddTool() {
	s := sdk.NewServer(sdk.Info{Name: "greeter", Version: "0.1.0"}, sdk.Options{Logger: hclog.NewNullLogger()})
	typed.AddTool(s, "greet", func(ctx context.Context, call *sdk.ToolCall, in GreetArgs) (Greeting, error) {
		text := "hello, " + in.Name
		if in.Shout {
			text += "!"
		}
		return Greeting{Text: text}, nil
	})
	// In main: s.Serve(ctx)
}

// Schema prints what to paste into plugin.json as the tool's
// input_schema; doctor fails the tool when the two disagree.
func ExampleSchema() {
	raw, err := typed.Schema[GreetArgs]()
	if err != nil {
		panic(err)
	}
	fmt.Println(string(raw))
	// Output:
	// {"type":"object","properties":{"name":{"type":"string","description":"who to greet"},"shout":{"type":"boolean"}},"required":["name"],"additionalProperties":false}
}
