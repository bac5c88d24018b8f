package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"yolop.dev/core/yep"
)

// Approval rules, loosest to tightest.
const (
	RuleAllow = "allow"
	RuleAsk   = "ask"
	RuleDeny  = "deny"
)

// The manifest's approval values for a tool ([ToolDef.Approval]).
const (
	// ApprovalAuto (the default, also spelled as absent) runs the tool
	// without asking, unless the user's policy says otherwise.
	ApprovalAuto = "auto"
	// ApprovalAlways asks the user before every call of the tool.
	ApprovalAlways = "always"
	// ApprovalAlwaysAsk is an older spelling of [ApprovalAlways].
	ApprovalAlwaysAsk = "always_ask"
)

// Approvals lists the values a manifest's tool approval may take; Risks
// the values of its risk.
var (
	Approvals = []string{ApprovalAuto, ApprovalAlways, ApprovalAlwaysAsk}
	Risks     = []string{"low", "medium", "high"}
)

// Answers of the approval question put through the ask sink.
const (
	AnswerAllow = "allow"
	AnswerDeny  = "deny"
)

// An ApprovalRequest is one call that needs the user's approval.
type ApprovalRequest struct {
	Tool       string          // the session-wide tool name
	Capability string          // the capability ref (e.g. "ext:echo" or "builtin:coding")
	Extension  string          // the extension name, "" for built-ins and contributed tools
	Version    string          // the extension's version, "" when none
	ToolCallID string          //
	Args       json.RawMessage // the call's arguments with secret fields redacted
	Narration  string          // the rendered narration line
	Risk       string          // the declared risk, "" when none
	Reason     string          // why it is asked: "the manifest asks before every call" / "your policy asks for ..."
}

// Who returns what serves the tool as a person reads it: "ext@version",
// the extension's name without a version, or the capability.
func (r ApprovalRequest) Who() string { return who(r.Extension, r.Version, r.Capability) }

func who(ext, version, capability string) string {
	switch {
	case ext != "" && version != "":
		return ext + "@" + version
	case ext != "":
		return ext
	}
	return capability
}

// maxQuestionArgs bounds the arguments quoted in a question, in runes.
const maxQuestionArgs = 400

// Question is the one-line question a front-end shows: names ext@version,
// the tool, the narration and the (redacted) arguments, e.g.
//
//	Allow echo@0.1.0 to run "reverse" (Reverse yolop; risk high) with {"text":"yolop"}?
func (r ApprovalRequest) Question() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Allow %s to run %q", r.Who(), r.Tool)
	var notes []string
	if r.Narration != "" && r.Narration != r.Tool {
		notes = append(notes, r.Narration)
	}
	if r.Risk != "" {
		notes = append(notes, "risk "+r.Risk)
	}
	if len(notes) > 0 {
		b.WriteString(" (" + strings.Join(notes, "; ") + ")")
	}
	if args := strings.TrimSpace(string(r.Args)); args != "" && args != "{}" {
		b.WriteString(" with " + clip(oneLine(args), maxQuestionArgs))
	}
	b.WriteString("?")
	return b.String()
}

// ruleRank orders the rules loosest to tightest; an unknown rule counts
// as ask.
func ruleRank(r string) int {
	switch r {
	case "", RuleAllow:
		return 0
	case RuleDeny:
		return 2
	}
	return 1
}

// manifestAsks reports whether a tool's declared approval asks before
// every call.
func manifestAsks(approval string) bool {
	return approval == ApprovalAlways || approval == ApprovalAlwaysAsk
}

// approve applies the approval rule to one call whose arguments are args
// (checked, after the pre_tool_use hooks): the tightest of the manifest's
// approval and the user's policy. It returns nil when the call may run,
// a *ApprovalDeniedError when it may not, and ctx's error when ctx ended
// while the user was asked. It emits tool.approval for every call it
// denies or asked about.
func (s *Session) approve(ctx context.Context, t *toolEntry, callID string, args json.RawMessage, tool toolSpan, turn int) error {
	ext, version := toolExtension(t)
	rule, reason := RuleAllow, ""
	if manifestAsks(t.def.Approval) {
		rule, reason = RuleAsk, "the manifest asks before every call"
	}
	by := yep.ApprovalByUser
	if s.opts.Policy != nil {
		info := ToolInfo{Name: t.name, Capability: t.cap.Name(), Def: t.def, Deferred: t.deferred}
		if p := s.opts.Policy(info, ext, version); ruleRank(p) > ruleRank(rule) {
			rule = p
			if ruleRank(p) == 2 {
				by = yep.ApprovalByPolicy
			}
			reason = "your policy asks before calls of this tool"
		}
	}
	emit := func(decision, by, why string) {
		if tool.observed {
			s.Emit(tool.event(yep.TraceToolApproval, turn, yep.ToolApprovalData{Tool: t.name, Capability: t.cap.Name(), Extension: ext, Version: version,
				ToolCallID: callID, Decision: decision, By: by, Reason: why}))
		}
	}
	denied := func(by, why string) error {
		emit(yep.ApprovalDenied, by, why)
		return &ApprovalDeniedError{Tool: t.name, Capability: t.cap.Name(), Extension: ext, Version: version, By: by, Reason: why}
	}
	switch ruleRank(rule) {
	case 0:
		return nil
	case 2:
		return denied(by, "your policy denies this tool")
	}
	red := redactArgs(t.def.InputSchema, args)
	req := ApprovalRequest{Tool: t.name, Capability: t.cap.Name(), Extension: ext, Version: version, ToolCallID: callID,
		Args: s.scrubJSON(red), Narration: s.scrub(Narrate(t.def.Narration, t.name, red)), Risk: t.def.Risk, Reason: reason}
	var (
		ok  bool
		why string
		err error
	)
	if s.opts.Approve != nil {
		ok, why, err = s.opts.Approve(ctx, req)
		if err != nil {
			ok, why = false, fmt.Sprintf("approval failed: %v", err)
		}
	} else {
		// Asked as the extension (the MCP gateway routes it to the call's
		// client by that name), or as the capability of a built-in or
		// contributed tool, which has none.
		asker := ext
		if asker == "" {
			asker = t.cap.Name()
		}
		var res yep.UIAskResult
		res, err = s.asks.ask(ctx, asker, yep.UIAskParams{Prompt: s.scrub(req.Question()), Options: []string{AnswerAllow, AnswerDeny}})
		ok = err == nil && !res.Cancelled && res.Answer == AnswerAllow
		if !ok && (err != nil || res.Cancelled) {
			why = "the question was cancelled (or another question was open), so the call was denied"
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if !ok {
		if why == "" {
			why = "the user denied the call"
		}
		return denied(yep.ApprovalByUser, why)
	}
	if why == "" {
		why = reason
	}
	emit(yep.ApprovalApproved, yep.ApprovalByUser, why)
	return nil
}

// toolExtension names the extension serving t and its version, or ""
// for a built-in or contributed tool.
func toolExtension(t *toolEntry) (ext, version string) {
	if e, ok := t.cap.(*Extension); ok {
		return e.ExtName(), e.grant.Version
	}
	return "", ""
}

// scrub and scrubJSON apply the session's scrubber ([ExtensionOptions.Scrub]),
// if any, to text going to the user.
func (s *Session) scrub(text string) string {
	if s.opts.Extension.Scrub == nil || text == "" {
		return text
	}
	return s.opts.Extension.Scrub(text)
}

func (s *Session) scrubJSON(raw json.RawMessage) json.RawMessage {
	if s.opts.Extension.Scrub == nil || len(raw) == 0 {
		return raw
	}
	out := s.opts.Extension.Scrub(string(raw))
	if !json.Valid([]byte(out)) {
		return raw
	}
	return json.RawMessage(out)
}

// Redacted replaces a secret argument's value in an approval question.
const Redacted = "[redacted]"

// redactArgs returns args with the value of every property its schema
// marks secret — "writeOnly": true, "format": "password" or "x-secret":
// true — replaced by [Redacted], in nested objects too. Arguments that are
// not an object, or a schema that does not parse, leave args as they are.
func redactArgs(schema, args json.RawMessage) json.RawMessage {
	if len(schema) == 0 {
		return args
	}
	var sch map[string]any
	if json.Unmarshal(schema, &sch) != nil {
		return args
	}
	var v map[string]any
	if json.Unmarshal(args, &v) != nil {
		return args
	}
	if !redactObject(sch, v) {
		return args
	}
	b, err := json.Marshal(v)
	if err != nil {
		return args
	}
	return b
}

// redactObject redacts v's secret properties in place, per sch, and
// reports whether it changed anything.
func redactObject(sch map[string]any, v map[string]any) bool {
	props, _ := sch["properties"].(map[string]any)
	changed := false
	for name, p := range props {
		ps, _ := p.(map[string]any)
		val, present := v[name]
		if ps == nil || !present {
			continue
		}
		if ps["writeOnly"] == true || ps["format"] == "password" || ps["x-secret"] == true {
			v[name] = Redacted
			changed = true
			continue
		}
		if obj, ok := val.(map[string]any); ok && redactObject(ps, obj) {
			changed = true
		}
	}
	return changed
}

// maxNarrationValue bounds one argument's value in a narration, in runes.
const maxNarrationValue = 80

// Narrate renders a tool's narration template with a call's arguments:
// each {name} is replaced by the argument's value, a JSON string as its
// text and anything else as compact JSON, cut to 80 runes (ending in "…")
// with control characters (newlines, ESC) turned into spaces. With no
// template, arguments that are no JSON object, or a placeholder naming no
// argument, the narration is the tool name. Pass arguments with secrets
// redacted: Narrate shows what it is given.
func Narrate(template, tool string, args json.RawMessage) string {
	if template == "" {
		return tool
	}
	var vals map[string]json.RawMessage
	if strings.Contains(template, "{") && json.Unmarshal(args, &vals) != nil {
		return tool
	}
	var b strings.Builder
	rest := template
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			b.WriteString(rest)
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			b.WriteString(rest)
			break
		}
		name := rest[i+1 : i+j]
		if !placeholderName(name) {
			// Not a placeholder: keep the brace and go on after it.
			b.WriteString(rest[:i+1])
			rest = rest[i+1:]
			continue
		}
		raw, ok := vals[name]
		if !ok {
			return tool
		}
		b.WriteString(rest[:i])
		b.WriteString(clip(oneLine(argText(raw)), maxNarrationValue))
		rest = rest[i+j+1:]
	}
	return oneLine(b.String())
}

// placeholderName reports whether name can be an argument name in a
// template: letters, digits, '_', '-' and '.'.
func placeholderName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-' && r != '.' {
			return false
		}
	}
	return true
}

// argText is a JSON value as a narration shows it: a string's text, or
// compact JSON.
func argText(raw json.RawMessage) string {
	var str string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &str) == nil {
		return str
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return string(raw)
	}
	return buf.String()
}

// oneLine replaces control characters (newlines, tabs, ESC) by spaces.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
}

// clip cuts s to at most n runes, the last of them "…" when cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
