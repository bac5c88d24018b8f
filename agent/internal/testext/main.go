// Command testext is a capability server for the agent's tests, built and
// run as a real subprocess over stdio. It serves:
//
//   - ask: puts {"question"} to the user over ui/ask and returns the
//     answer;
//   - wait: streams "waiting" and then runs until it is cancelled;
//   - lookup (deferred): returns "value of <key>";
//   - a pre_tool_use hook on every tool that blocks a call whose
//     arguments contain "forbidden";
//   - a dynamic prompt, "turn <n>".
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
)

func main() {
	s := sdk.NewServer(sdk.Info{Name: "testext", Version: "0.1.0", UIAsk: true}, sdk.Options{})
	s.Tool("ask", func(ctx context.Context, c *sdk.ToolCall) (yep.ToolResult, error) {
		var in struct{ Question string }
		if err := c.Bind(&in); err != nil {
			return yep.ToolResult{}, err
		}
		a, err := s.Ask(ctx, yep.UIAskParams{Prompt: in.Question})
		if err != nil {
			return yep.ToolResult{}, err
		}
		if a.Cancelled {
			return yep.ToolResult{Output: "the user did not answer", IsError: true}, nil
		}
		return yep.ToolResult{Output: "the user answered: " + a.Answer}, nil
	})
	s.StreamingTool("wait", func(ctx context.Context, c *sdk.ToolCall) (yep.ToolResult, error) {
		if err := c.Update("waiting"); err != nil {
			return yep.ToolResult{}, err
		}
		<-ctx.Done()
		return yep.ToolResult{}, ctx.Err()
	})
	s.Tool("lookup", func(ctx context.Context, c *sdk.ToolCall) (yep.ToolResult, error) {
		var in struct{ Key string }
		if err := c.Bind(&in); err != nil {
			return yep.ToolResult{}, err
		}
		return yep.ToolResult{Output: "value of " + in.Key}, nil
	})
	s.OnHook(yep.HookPreToolUse, "*", func(ctx context.Context, h *sdk.HookEvent) (yep.HookFireResult, error) {
		if strings.Contains(string(h.Args), "forbidden") {
			return yep.HookFireResult{Decision: yep.DecisionBlock, Reason: "forbidden words are not allowed; ask for something else"}, nil
		}
		return yep.HookFireResult{Decision: yep.DecisionAllow}, nil
	})
	s.DynamicPrompt(func(ctx context.Context, p yep.PromptContributionParams) (string, error) {
		return fmt.Sprintf("turn %d", p.Turn), nil
	})
	if err := s.Serve(context.Background()); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "testext:", err)
		os.Exit(1)
	}
}
