package host

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"yolop.dev/core/yep"
)

// argsCap is a built-in with one tool and, optionally, a pre_tool_use hook
// that rewrites the arguments to mutateTo.
type argsCap struct {
	Base
	calls, fired int
	mutateTo     json.RawMessage
}

func (*argsCap) Name() string { return "builtin:args" }
func (*argsCap) Tools() []ToolDef {
	return []ToolDef{{Name: "greet", InputSchema: json.RawMessage(`{"type":"object","required":["name"]}`)}}
}
func (c *argsCap) CallTool(_ context.Context, call ToolCall, _ func(yep.ToolUpdateParams)) (yep.ToolResult, error) {
	c.calls++
	return yep.ToolResult{Output: string(call.Args)}, nil
}
func (c *argsCap) Hooks() []HookGrant {
	if c.mutateTo == nil {
		return nil
	}
	return []HookGrant{{Event: yep.HookPreToolUse, Matcher: "*"}}
}
func (c *argsCap) FireHook(context.Context, HookGrant, yep.HookFireParams) (yep.HookFireResult, error) {
	c.fired++
	return yep.HookFireResult{Decision: yep.DecisionMutate, Args: c.mutateTo}, nil
}

// compileNeedName is a CompileArgs whose check is needName.
func compileNeedName(json.RawMessage) (func(json.RawMessage) error, error) {
	return needName, nil
}

// needName is an argument check that wants a "name" member.
func needName(args json.RawMessage) error {
	var m map[string]any
	if err := json.Unmarshal(args, &m); err != nil {
		return err
	}
	if _, ok := m["name"]; !ok {
		return errors.New(`missing required field "name"`)
	}
	return nil
}

// Invalid arguments fail the call before anything sees them: no hook
// fires and the tool is never called; arguments a hook rewrote are
// checked too.
func TestCheckArgsBeforeAnythingRuns(t *testing.T) {
	c := &argsCap{mutateTo: json.RawMessage(`{"nom":"x"}`)}
	s := NewSession(SessionOptions{Builtins: []Capability{c}, CompileArgs: compileNeedName})
	defer s.Close()
	ctx := context.Background()
	_, err := s.CallTool(ctx, "greet", "c1", json.RawMessage(`{"nme":"x"}`), nil)
	if !errors.Is(err, ErrInvalidArgs) || !strings.Contains(err.Error(), `arguments of tool "greet": missing required field "name"`) {
		t.Fatalf("invalid args = %v", err)
	}
	if c.calls != 0 || c.fired != 0 {
		t.Fatalf("invalid args reached the hook (%d) or the tool (%d)", c.fired, c.calls)
	}
	_, err = s.CallTool(ctx, "greet", "c2", json.RawMessage(`{"name":"x"}`), nil)
	if !errors.Is(err, ErrInvalidArgs) || c.fired != 1 || c.calls != 0 {
		t.Fatalf("a hook's invalid rewrite = %v (fired %d, called %d)", err, c.fired, c.calls)
	}
	c.mutateTo = json.RawMessage(`{"name":"y"}`)
	res, err := s.CallTool(ctx, "greet", "c3", json.RawMessage(`{"name":"x"}`), nil)
	if err != nil || res.Output != `{"name":"y"}` || c.calls != 1 {
		t.Fatalf("valid call = %+v, %v (called %d)", res, err, c.calls)
	}
}
