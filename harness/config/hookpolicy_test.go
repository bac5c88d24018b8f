package config

import (
	"testing"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/harness/settings"
	"yolop.dev/packaging"
)

// TestApplyHookPolicy: the user's [hooks] on_error sets a declarative
// plugin's subscriptions — block only on events that can block, allow
// (warn) on all — per plugin before the table's; unset and a package with
// a yolop facet keep what the grant says.
func TestApplyHookPolicy(t *testing.T) {
	grant := func() host.Grant {
		return host.Grant{Hooks: []host.HookGrant{
			{Event: yep.HookPreToolUse, Matcher: "bash", OnError: yep.HookOnErrorBlock},
			{Event: yep.HookSessionStart, Matcher: "*", OnError: yep.HookOnErrorWarn},
		}}
	}
	plugin := &packaging.Manifest{Name: "guard", Declarative: &packaging.Declarative{}}
	ext := &packaging.Manifest{Name: "guard", Yolop: &packaging.Facet{}}
	on := func(g host.Grant) [2]string { return [2]string{g.Hooks[0].OnError, g.Hooks[1].OnError} }
	for _, tc := range []struct {
		name string
		m    *packaging.Manifest
		p    settings.HookPolicy
		want [2]string
	}{
		{"unset", plugin, settings.HookPolicy{}, [2]string{"block", "warn"}},
		{"allow", plugin, settings.HookPolicy{OnError: "allow"}, [2]string{"warn", "warn"}},
		{"block leaves a non-blocking event", plugin, settings.HookPolicy{OnError: "block", Plugins: map[string]string{"other": "allow"}}, [2]string{"block", "warn"}},
		{"the plugin's entry wins", plugin, settings.HookPolicy{OnError: "block", Plugins: map[string]string{"guard": "allow"}}, [2]string{"warn", "warn"}},
		{"an extension keeps its own", ext, settings.HookPolicy{OnError: "allow"}, [2]string{"block", "warn"}},
	} {
		g := grant()
		ApplyHookPolicy(tc.m, &g, tc.p)
		if got := on(g); got != tc.want {
			t.Errorf("%s: on_error %v, want %v", tc.name, got, tc.want)
		}
	}
}
