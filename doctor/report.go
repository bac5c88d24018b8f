package doctor

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// A Status grades one check.
type Status string

const (
	// Pass: the server does what the protocol and its manifest say.
	Pass Status = "pass"
	// Warn: conforming, but something the author should look at.
	Warn Status = "warn"
	// Fail: the extension must not ship like this.
	Fail Status = "fail"
)

// Check groups, in report order. GroupProvider holds the checks of a
// providers facet: the announcement and the OpenAI-compatible endpoint
// behind it.
const (
	GroupManifest  = "manifest"
	GroupProtocol  = "protocol"
	GroupHandshake = "handshake"
	GroupClamp     = "clamp"
	GroupPrompt    = "prompt"
	GroupTool      = "tool"
	GroupCommand   = "command"
	GroupProvider  = "provider"
	GroupConfig    = "config"
	GroupUIAsk     = "ui_ask"
	GroupStatus    = "status"
	GroupCancel    = "cancel"
	GroupShutdown  = "shutdown"
	GroupHook      = "hook"
	GroupSchema    = "schema"
)

// A Check is one graded finding.
type Check struct {
	Group  string `json:"group"`
	Name   string `json:"name"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
}

// A HookProbe records what the host did with one hook subscription under
// each synthetic condition.
type HookProbe struct {
	Event   string `json:"event"`
	Matcher string `json:"matcher"`
	OnError string `json:"on_error"`
	// TimeoutMS is the subscription's effective timeout.
	TimeoutMS int `json:"timeout_ms"`
	// Tool is the synthetic tool name the event was fired for.
	Tool string `json:"tool"`
	// Steps are the conditions in the order they were applied: "normal",
	// "timeout", "crash", "after-crash".
	Steps []HookStep `json:"steps"`
}

// A HookStep is one firing of a subscription and the host's outcome.
type HookStep struct {
	Condition string `json:"condition"`
	// Decision is what the server answered ("allow", "block", "mutate",
	// anything else it sent), or "" when it did not answer in time.
	Decision string `json:"decision,omitempty"`
	// Outcome is what the host did with the tool call: "proceeded",
	// "blocked" (pre_tool_use), "withheld" (post_tool_use), "mutated".
	Outcome string `json:"outcome"`
	Detail  string `json:"detail,omitempty"`
	Status  Status `json:"status"`
}

// A Report is the outcome of one doctor run.
type Report struct {
	Extension string `json:"extension"`
	Version   string `json:"version,omitempty"`
	Dir       string `json:"dir,omitempty"`
	// Protocol is the version spoken after negotiation, "" when the
	// handshake failed.
	Protocol string      `json:"protocol,omitempty"`
	Checks   []Check     `json:"checks"`
	Hooks    []HookProbe `json:"hooks,omitempty"`
	// Messages counts the lines validated against the schema.
	Messages int `json:"messages"`
	Passed   int `json:"passed"`
	Warnings int `json:"warnings"`
	Failed   int `json:"failed"`
}

func (r *Report) add(group, name string, st Status, format string, args ...any) {
	r.Checks = append(r.Checks, Check{Group: group, Name: name, Status: st, Detail: fmt.Sprintf(format, args...)})
	switch st {
	case Pass:
		r.Passed++
	case Warn:
		r.Warnings++
	case Fail:
		r.Failed++
	}
}

// OK reports whether no check failed.
func (r *Report) OK() bool { return r.Failed == 0 }

// WriteJSON writes the report as one indented JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the report for a person: one line per check, then
// each hook's decisions, then the tally.
func (r *Report) WriteTable(w io.Writer) error {
	return r.WriteTableStyled(w, nil)
}

// WriteTableStyled is [Report.WriteTable] with every status word (PASS,
// WARN, FAIL) passed through style, e.g. to colour it on a terminal. Nil
// leaves them plain. style should change every word's width alike, so the
// columns stay aligned.
func (r *Report) WriteTableStyled(w io.Writer, style func(Status, string) string) error {
	if style == nil {
		style = func(_ Status, s string) string { return s }
	}
	fmt.Fprintf(w, "doctor: extension %s", r.Extension)
	if r.Version != "" {
		fmt.Fprintf(w, " %s", r.Version)
	}
	if r.Dir != "" {
		fmt.Fprintf(w, " (%s)", r.Dir)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range r.Checks {
		detail := strings.ReplaceAll(c.Detail, "\n", "\n\t\t\t")
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", style(c.Status, strings.ToUpper(string(c.Status))), c.Group, c.Name, detail)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Hooks) > 0 {
		fmt.Fprintln(w, "\nhook decisions (synthetic events; what the host did):")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  subscription\ton_error\tcondition\tserver answered\thost did\tgrade\n")
		for _, h := range r.Hooks {
			sub := fmt.Sprintf("%s %s → %s", h.Event, h.Matcher, h.Tool)
			for i, s := range h.Steps {
				if i > 0 {
					sub = ""
				}
				dec := s.Decision
				if dec == "" {
					dec = "-"
				}
				onErr := ""
				if i == 0 {
					onErr = h.OnError
				}
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", sub, onErr, s.Condition, dec, s.Outcome, style(s.Status, strings.ToUpper(string(s.Status))))
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	verdict := "OK"
	if !r.OK() {
		verdict = "FAILED"
	}
	_, err := fmt.Fprintf(w, "\n%s: %d passed, %d warnings, %d failed (%d messages validated against schema/yep/v1/schema.json)\n",
		verdict, r.Passed, r.Warnings, r.Failed, r.Messages)
	return err
}
