package sdk_test

import (
	"context"
	"encoding/json"
	"testing"

	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
)

// TestHookContextAndPayload: a lifecycle hook reads the payload's fields
// (the prompt, the source) and the context it answers with allow reaches
// the host, joined in order when two subscriptions add some.
func TestHookContextAndPayload(t *testing.T) {
	s := sdk.NewServer(sdk.Info{}, quiet())
	s.OnHook("user_prompt_submit", "*", func(ctx context.Context, h *sdk.HookEvent) (yep.HookFireResult, error) {
		return yep.HookFireResult{Decision: yep.DecisionAllow, Context: "first saw " + h.Payload.Prompt}, nil
	})
	s.OnHook("user_prompt_submit", "fix*", func(ctx context.Context, h *sdk.HookEvent) (yep.HookFireResult, error) {
		return yep.HookFireResult{Context: "second"}, nil
	})
	h := serve(t, s)
	h.initialize(t)
	payload, _ := json.Marshal(yep.HookPayload{Prompt: "fix the build"})
	var res yep.HookFireResult
	if err := h.Call(ctxT(t), yep.MethodHookFire, yep.HookFireParams{Event: "user_prompt_submit", ToolName: "fix", Payload: payload}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Decision != yep.DecisionAllow || res.Context != "first saw fix the build\n\nsecond" {
		t.Fatalf("result %+v", res)
	}
}
