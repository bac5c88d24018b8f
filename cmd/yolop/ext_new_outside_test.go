package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/doctor"
	"yolop.dev/harness/scaffold"
)

// TestExtNewGoOutsideACheckout: run from an empty directory outside any
// yolop checkout and given no --core, `yolop ext new --lang go` writes
// the SDK the binary carries under lib/yolop-core, builds, and the
// package installs and passes the doctor with zero edits: Go and the
// module proxy are all it needs (yolop.dev/core is not published).
func TestExtNewGoOutsideACheckout(t *testing.T) {
	t.Parallel()
	needTool(t, "go")
	cfg, work := t.TempDir(), t.TempDir()
	out := must(t, cfg, work, "ext", "new", "demo", "--lang", "go") // the literal first command: no facet asked, the hello tool
	for _, want := range []string{"scaffolded extension demo (go)", "handleToolHello", scaffold.CoreVendorDir + "/", "yolop ext doctor demo"} {
		if !strings.Contains(out, want) {
			t.Errorf("ext new output lacks %q:\n%s", want, out)
		}
	}
	mod, err := os.ReadFile(filepath.Join(work, "demo", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mod), "replace yolop.dev/core => ./"+scaffold.CoreVendorDir+"\n") {
		t.Errorf("go.mod does not replace the SDK with the vendored copy:\n%s", mod)
	}
	if _, err := os.Stat(filepath.Join(work, "demo", scaffold.CoreVendorDir, "sdk", "server.go")); err != nil {
		t.Errorf("the vendored SDK: %v", err)
	}

	installAndDoctorHello(t, cfg, work)
}

// TestExtNewSDKOutsideACheckout: from an empty directory outside any
// checkout, `yolop ext new --lang python|typescript --sdk` writes a
// package on the vendored SDK that installs and passes the doctor with
// zero edits — asked for no facet, with the hello tool.
func TestExtNewSDKOutsideACheckout(t *testing.T) {
	t.Parallel()
	for lang, interp := range map[string]string{"python": "python3", "typescript": "node"} {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			needTool(t, interp)
			cfg, work := t.TempDir(), t.TempDir()
			out := must(t, cfg, work, "ext", "new", "demo", "--lang", lang, "--sdk")
			for _, want := range []string{"scaffolded extension demo (" + lang + ")", "handle_tool_hello", "yolop ext doctor demo"} {
				if !strings.Contains(out, want) {
					t.Errorf("ext new output lacks %q:\n%s", want, out)
				}
			}
			if ents, err := os.ReadDir(filepath.Join(work, "demo", scaffold.SDKDir)); err != nil || len(ents) == 0 {
				t.Fatalf("no vendored SDK in %s: %v", scaffold.SDKDir, err)
			}
			installAndDoctorHello(t, cfg, work)
		})
	}
}

// installAndDoctorHello installs ./demo in work with the config directory
// cfg and runs the doctor on it: it must pass with no warning, its hello
// tool called.
func installAndDoctorHello(t *testing.T, cfg, work string) {
	t.Helper()
	must(t, cfg, work, "ext", "install", "./demo", "--yes")
	out, errOut, code := yolopProc(t, cfg, work, "", "ext", "doctor", "--json", "--timeout", slowMachine, "demo")
	var rep doctor.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || !rep.OK() || rep.Warnings != 0 {
		t.Fatalf("doctor: exit %d (%v)\n%s\n%s", code, err, table(&rep), errOut)
	}
	check(t, &rep, doctor.GroupTool, "tool hello")
}
