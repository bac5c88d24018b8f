package settings

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestApproval(t *testing.T) {
	ctx := context.Background()
	f := New(t.TempDir())
	if a, err := f.Approval(ctx); err != nil || !a.IsZero() {
		t.Fatalf("no settings file: %+v, %v; want no policy", a, err)
	}
	for body, want := range map[string]Approval{
		"[approval]\nrisk = \"high\"\n": {Risk: "high"},
		"[approval]\nrisk = \"low\"\n[approval.extensions]\necho = \"ask\"\n[approval.tools]\n\"echo.reverse\" = \"deny\"\nbash = \"allow\"\n": {
			Risk: "low", Extensions: map[string]string{"echo": "ask"}, Tools: map[string]string{"echo.reverse": "deny", "bash": "allow"},
		},
		"[approval.tools]\n\"mcp__github__create_issue\" = \"ask\"\n": {Tools: map[string]string{"mcp__github__create_issue": "ask"}},
		"[approval]\n": {},
	} {
		if err := os.WriteFile(f.Path(), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := f.Approval(ctx)
		if err != nil {
			t.Errorf("%q: %v", body, err)
			continue
		}
		if diff := cmp.Diff(want, got, cmpEmptyMaps); diff != "" {
			t.Errorf("%q (-want +got):\n%s", body, diff)
		}
	}
}

var cmpEmptyMaps = cmp.Transformer("nilmap", func(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
})

func TestApprovalMalformed(t *testing.T) {
	ctx := context.Background()
	f := New(t.TempDir())
	for body, want := range map[string][]string{
		"approval = \"ask\"\n":                                 {"approval must be a table"},
		"[approval]\nrisk = \"severe\"\n":                      {"approval.risk", `"low", "medium" or "high"`, `"severe"`},
		"[approval]\nrisk = 3\n":                               {"approval.risk", `"low", "medium" or "high"`},
		"[approval]\nlevel = \"high\"\n":                       {"approval.level", "risk, extensions, tools"},
		"[approval]\nextensions = \"ask\"\n":                   {"approval.extensions must be a table"},
		"[approval.extensions]\necho = \"never\"\n":            {`approval.extensions."echo"`, `"allow", "ask" or "deny"`, `"never"`},
		"[approval.extensions]\necho = true\n":                 {`approval.extensions."echo"`, `"allow", "ask" or "deny"`},
		"[approval.tools]\n\"echo.reverse\" = \"Deny\"\n":      {`approval.tools."echo.reverse"`, `"allow", "ask" or "deny"`, `"Deny"`},
		"[approval.tools]\n\"echo.reverse\" = { x = \"y\" }\n": {`approval.tools."echo.reverse"`, "a table"},
	} {
		if err := os.WriteFile(f.Path(), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := f.Approval(ctx)
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), f.Path()) {
			t.Errorf("%q: err = %v; want ErrMalformed naming the file", body, err)
			continue
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: err = %v; want it to say %s", body, err, w)
			}
		}
	}
}

func TestApprovalSurvivesAnExtensionWrite(t *testing.T) {
	ctx := context.Background()
	f := New(t.TempDir())
	body := "[approval]\nrisk = \"medium\"\n[approval.extensions]\necho = \"ask\"\n[approval.tools]\n\"echo.reverse\" = \"deny\"\n"
	if err := os.WriteFile(f.Path(), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Enable(ctx, "echo"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Disable(ctx, "echo"); err != nil {
		t.Fatal(err)
	}
	got, err := f.Approval(ctx)
	want := Approval{Risk: "medium", Extensions: map[string]string{"echo": "ask"}, Tools: map[string]string{"echo.reverse": "deny"}}
	if err != nil || !cmp.Equal(want, got) {
		t.Fatalf("after enable and disable: %+v, %v; want %+v", got, err, want)
	}
}

func TestApprovalRule(t *testing.T) {
	a := Approval{
		Risk:       "medium",
		Extensions: map[string]string{"echo": "ask", "files": "allow", "web": "deny"},
		Tools:      map[string]string{"echo.reverse": "deny", "files.read": "ask", "web.get": "allow", "bash": "ask", "reverse": "deny"},
	}
	for _, c := range []struct {
		ext, tool, session, risk, want string
	}{
		{"echo", "reverse", "reverse", "", "deny"},  // the tool's deny beats the extension's ask
		{"echo", "echo", "echo", "", "ask"},         // the extension's entry
		{"files", "read", "read", "", "ask"},        // the tool's ask beats the extension's allow
		{"files", "write", "write", "", "allow"},    // the extension's allow
		{"files", "write", "write", "high", "ask"},  // risk at least medium: ask beats allow
		{"files", "write", "write", "low", "allow"}, // risk below the threshold
		{"web", "get", "get", "", "deny"},           // the extension's deny beats the tool's allow
		{"other", "x", "x", "", ""},                 // no entry covers it
		{"other", "x", "x", "medium", "ask"},        // the risk rule alone
		{"", "bash", "bash", "", "ask"},             // a built-in by its session name
		{"", "read_file", "read_file", "", ""},
		{"other", "reverse", "reverse", "", ""}, // "reverse" names a built-in or MCP tool, not another extension's
		{"echo", "reverse", "echo__reverse", "", "deny"},
	} {
		if got := a.Rule(c.ext, c.tool, c.session, c.risk); got != c.want {
			t.Errorf("Rule(%q, %q, %q, %q) = %q, want %q", c.ext, c.tool, c.session, c.risk, got, c.want)
		}
	}
	if got := (Approval{}).Rule("echo", "echo", "echo", "high"); got != "" {
		t.Errorf("no policy: %q, want none", got)
	}
}
