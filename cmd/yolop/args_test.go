package main

import (
	"strings"
	"testing"
)

// Every level of the command tree catches typos and missing arguments:
// non-zero exit, a message that says what is wrong and what was meant or
// needed, and no doubled prefixes.
func TestTyposAndMissingArguments(t *testing.T) {
	isolate(t)
	pkg := echoPackage(t)
	if _, errOut, code := cli(t, "", "ext", "install", pkg, "--yes"); code != 0 {
		t.Fatal(errOut)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"sesion"}, []string{`unknown command "sesion" for "yolop"`, "Did you mean this?", "session"}},
		{[]string{"ext", "instal"}, []string{`unknown command "instal" for "yolop ext"`, "install"}},
		{[]string{"ext", "lst"}, []string{`unknown command "lst" for "yolop ext"`, "list"}},
		{[]string{"registry", "pubish"}, []string{`unknown command "pubish" for "yolop registry"`, "publish"}},
		{[]string{"ext", "secret", "st"}, []string{`unknown command "st" for "yolop ext secret"`, "set"}},
		{[]string{"ext", "enable"}, []string{"yolop ext enable <name>: missing <name>; installed: echo", "Usage: yolop ext enable <name>"}},
		{[]string{"ext", "remove"}, []string{"yolop ext remove <name>: missing <name>; installed: echo"}},
		{[]string{"ext", "disable"}, []string{"yolop ext disable <name>: missing <name>"}},
		{[]string{"ext", "install"}, []string{"yolop ext install <source>: missing <source>"}},
		{[]string{"ext", "enable", "echo", "extra"}, []string{`yolop ext enable: unexpected argument "extra"`}},
		{[]string{"ext", "secret", "set", "echo"}, []string{"missing <field>"}},
		{[]string{"registry", "publish"}, []string{"yolop registry publish <file.crate>: missing <file.crate>"}},
		{[]string{"ext", "update", "nosuch"}, []string{"update nosuch: extension not installed"}},
	} {
		out, errOut, code := cli(t, "", tc.args...)
		what := strings.Join(tc.args, " ")
		if code == 0 {
			t.Errorf("%s: exit 0\n%s%s", what, out, errOut)
			continue
		}
		mustContain(t, what, errOut, tc.want...)
		for _, doubled := range []string{"yolop: yolop", "update nosuch: update nosuch"} {
			if strings.Contains(errOut, doubled) {
				t.Errorf("%s: doubled prefix %q in %q", what, doubled, errOut)
			}
		}
	}
	// A group with no subcommand still prints its help and succeeds.
	out, _, code := cli(t, "", "ext")
	if code != 0 || !strings.Contains(out, "install") {
		t.Fatalf("yolop ext: %d\n%s", code, out)
	}
}
