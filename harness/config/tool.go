package config

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/harness/secrets"
	"yolop.dev/packaging"
)

// SecretToolName is the agent-facing tool that triggers secret entry.
const SecretToolName = "set_extension_secret"

// SecretToolOptions configure [NewSecretTool]. Secrets and Manifest are
// required.
type SecretToolOptions struct {
	Secrets secrets.Store
	// Manifest returns an installed extension's manifest.
	Manifest func(ctx context.Context, name string) (*packaging.Manifest, error)
	// Ask puts the masked question to the user. Nil makes the tool answer
	// how the user can set the secret from a terminal instead.
	Ask host.AskSink
	// Scrubber, if set, learns each saved value at once, so it is redacted
	// from the rest of the session.
	Scrubber *Scrubber
	// OnSaved, if set, runs after a value is stored — e.g. to push it to the
	// live extension ([Resolver.PushSession]). Its error is reported in the
	// tool result; the value stays saved.
	OnSaved func(ctx context.Context, m *packaging.Manifest) error
}

// A SecretTool is the built-in capability "builtin:secrets" serving
// set_extension_secret: the agent names an extension and a secret field;
// the user is asked through the ask sink with masked input, the answer goes
// straight to the credential store, and the agent sees only "(saved)". An
// agent that passes a value is refused: a value the agent knows is already
// in the transcript.
type SecretTool struct {
	host.Base
	o SecretToolOptions
}

// NewSecretTool returns the capability.
func NewSecretTool(o SecretToolOptions) *SecretTool { return &SecretTool{o: o} }

// Name implements [host.Capability].
func (*SecretTool) Name() string { return "builtin:secrets" }

var secretToolDef = host.ToolDef{
	Name: SecretToolName,
	Description: "Ask the user to enter a secret config field of an extension (an API token, a password). " +
		"You never pass or see the value: the user types it into a masked prompt and it goes straight to the credential store. " +
		"list_extensions shows which secret fields are unset.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{` +
		`"extension":{"type":"string","description":"the extension's name"},` +
		`"field":{"type":"string","description":"the secret config field, as list_extensions names it"}},` +
		`"required":["extension","field"],"additionalProperties":false}`),
	NeverDefer: true,
	Risk:       "low",
}

// Tools implements [host.Capability].
func (*SecretTool) Tools() []host.ToolDef { return []host.ToolDef{secretToolDef} }

// CallTool implements [host.Capability].
func (t *SecretTool) CallTool(ctx context.Context, call host.ToolCall, _ func(yep.ToolUpdateParams)) (yep.ToolResult, error) {
	if call.Name != SecretToolName {
		return yep.ToolResult{}, yep.ErrMethodNotFound
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return toolError("arguments must be an object with extension and field: %v", err), nil
	}
	var extra []string
	for k := range args {
		if k != "extension" && k != "field" {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		// Never echo what was passed: it may be the secret.
		return toolError("refused: %s takes no value (got %s). The value of a secret is typed by the user into a masked prompt, never passed by the agent; call it again with only extension and field, and the user will be asked", SecretToolName, strings.Join(extra, ", ")), nil
	}
	var ext, field string
	_ = json.Unmarshal(args["extension"], &ext)
	_ = json.Unmarshal(args["field"], &field)
	if ext == "" || field == "" {
		return toolError("%s needs extension and field (strings)", SecretToolName), nil
	}
	m, err := t.o.Manifest(ctx, ext)
	if err != nil {
		return toolError("%v", err), nil
	}
	fields, err := m.ConfigFields()
	if err != nil {
		return toolError("%v", err), nil
	}
	i := slices.IndexFunc(fields, func(f packaging.ConfigField) bool { return f.Name == field })
	if i < 0 {
		var secretNames []string
		for _, f := range fields {
			if f.Secret {
				secretNames = append(secretNames, f.Name)
			}
		}
		return toolError("extension %s has no config field %q (its secret fields: %s)", ext, field, strings.Join(secretNames, ", ")), nil
	}
	f := fields[i]
	if !f.Secret {
		return toolError("field %q of extension %s is not a secret; it is plain config in settings.toml", field, ext), nil
	}
	if t.o.Ask == nil {
		return toolError("there is no one to ask in this session; the user can run `yolop ext secret set %s %s` in a terminal", ext, field), nil
	}
	res, err := t.o.Ask.Ask(ctx, "yolop", SecretKind{}.Question(ext, f, ""))
	if err != nil || res.Cancelled {
		return yep.ToolResult{Output: fmt.Sprintf("the user cancelled; nothing was saved for %s.%s", ext, field), IsError: true}, nil
	}
	v := secrets.New(strings.TrimSpace(res.Answer))
	if v.IsZero() {
		return yep.ToolResult{Output: fmt.Sprintf("the user entered nothing; nothing was saved for %s.%s", ext, field), IsError: true}, nil
	}
	if err := t.o.Secrets.Set(ctx, ext, field, v); err != nil {
		return toolError("saving the secret failed: %v", err), nil
	}
	if t.o.Scrubber != nil {
		t.o.Scrubber.Add(ext, field, v)
	}
	out := fmt.Sprintf("(saved) the secret %s of extension %s is set; it reaches the extension's server as an environment variable only", field, ext)
	if t.o.OnSaved != nil {
		if err := t.o.OnSaved(ctx, m); err != nil {
			out += fmt.Sprintf(" (applying it to the running extension failed: %v)", err)
		}
	}
	return yep.ToolResult{Output: out}, nil
}

func toolError(format string, args ...any) yep.ToolResult {
	return yep.ToolResult{Output: fmt.Sprintf(format, args...), IsError: true}
}
