package packaging

import (
	"testing"

	"yolop.dev/core/yep"
)

// A manifest may subscribe to every hook event yep defines, lifecycle
// events included, with the tool events' shape: event, matcher,
// timeout_ms and on_error.
func TestLoadAcceptsLifecycleHookEvents(t *testing.T) {
	var hooks []any
	for _, ev := range yep.HookEvents {
		hooks = append(hooks, obj{"event": ev, "matcher": "*", "timeout_ms": 500, "on_error": "block"})
	}
	dir := pkg(t, map[string]any{"plugin.json": manifest(func(f obj) { f["hooks"] = hooks })})
	m, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(m.Yolop.Hooks); got != len(yep.HookEvents) {
		t.Fatalf("%d hooks loaded, want %d", got, len(yep.HookEvents))
	}
	for i, ev := range yep.HookEvents {
		if h := m.Yolop.Hooks[i]; h.Event != ev || h.OnError != "block" || h.TimeoutMS != 500 {
			t.Errorf("hooks[%d] = %+v, want %s with on_error block and timeout_ms 500", i, h, ev)
		}
	}
}
