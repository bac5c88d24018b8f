package usage

import (
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	for use, want := range map[string]Args{
		"install <source>":                   {Required: []string{"<source>"}},
		"list [name]":                        {Optional: []string{"[name]"}},
		"set <name> <field> <value>":         {Required: []string{"<name>", "<field>", "<value>"}},
		"get <name> [field]":                 {Required: []string{"<name>"}, Optional: []string{"[field]"}},
		"publish <file.crate> --index <dir>": {Required: []string{"<file.crate>"}},
		"new <name> --lang python|go":        {Required: []string{"<name>"}},
		"session":                            {},
	} {
		got := Parse(use)
		if !slices.Equal(got.Required, want.Required) || !slices.Equal(got.Optional, want.Optional) {
			t.Errorf("Parse(%q) = %+v, want %+v", use, got, want)
		}
	}
}

func TestCheck(t *testing.T) {
	a := Parse("get <name> [field]")
	c := Command{Path: "yolop ext config get", UseLine: "yolop ext config get <name> [field] [flags]"}
	for _, ok := range [][]string{{"echo"}, {"echo", "mode"}} {
		if err := a.Check(c, ok); err != nil {
			t.Errorf("Check(%q): %v", ok, err)
		}
	}
	if err := a.Check(c, nil); err == nil || err.Error() != "yolop ext config get <name> [field]: missing <name>\nUsage: yolop ext config get <name> [field] [flags]" {
		t.Errorf("missing, no candidates: %v", err)
	}
	c.Candidates = func() []string { return []string{"echo", "lsp"} }
	if err := a.Check(c, nil); err == nil || err.Error() != "yolop ext config get <name> [field]: missing <name>; one of: echo, lsp\nUsage: yolop ext config get <name> [field] [flags]" {
		t.Errorf("missing, candidates: %v", err)
	}
	c.Label = "installed"
	if err := a.Check(c, nil); err == nil || err.Error() != "yolop ext config get <name> [field]: missing <name>; installed: echo, lsp\nUsage: yolop ext config get <name> [field] [flags]" {
		t.Errorf("missing, labelled candidates: %v", err)
	}
	if err := a.Check(c, []string{"echo", "mode", "extra"}); err == nil || err.Error() != "yolop ext config get: unexpected argument \"extra\"\nUsage: yolop ext config get <name> [field] [flags]" {
		t.Errorf("extra: %v", err)
	}
}

func TestUnknownCommand(t *testing.T) {
	if err := UnknownCommand("yolop ext", "instal", []string{"install"}); err.Error() != "unknown command \"instal\" for \"yolop ext\"\n\nDid you mean this?\n\tinstall\n\nRun 'yolop ext --help' for its commands." {
		t.Errorf("with a suggestion: %q", err)
	}
	if err := UnknownCommand("yolop", "zzz", nil); err.Error() != "unknown command \"zzz\" for \"yolop\"\n\nRun 'yolop --help' for its commands." {
		t.Errorf("without: %q", err)
	}
}
