package stdio

import (
	"fmt"
	"os"

	"yolop.dev/core"
	"yolop.dev/transport/stdio/confine"
)

// A confinedStart is the launch of a server under spec.Sandbox: the
// launcher command that replaces the server's own, and the instance's
// private temporary directory.
type confinedStart struct {
	cmd    *confine.Command
	tmpDir string
}

// prepareConfined checks that the sandbox can be enforced as far as it is
// required, creates the instance's private temporary directory (TMPDIR in
// env) and prepares the launcher that applies the rules and execs path.
func prepareConfined(spec core.ServerSpec, launcher, path string, args, env []string) (*confinedStart, error) {
	report := confine.Check(spec.Sandbox)
	if spec.Sandbox.Required && !report.Full() {
		return nil, fmt.Errorf("extension %q: its sandbox is required but this machine cannot enforce it: %s", spec.Name, report)
	}
	tmp, err := os.MkdirTemp("", "yolop-"+safeName(spec.Name)+"-")
	if err != nil {
		return nil, fmt.Errorf("extension %q: private temp directory: %w", spec.Name, err)
	}
	env = setEnv(env, "TMPDIR", tmp)
	cmd, err := confine.Launch{
		Launcher: launcher,
		Program:  path,
		Args:     args,
		Env:      env,
		Sandbox:  spec.Sandbox,
		TempDir:  tmp,
	}.Command()
	if err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("extension %q: %w", spec.Name, err)
	}
	return &confinedStart{cmd: cmd, tmpDir: tmp}, nil
}

// abort releases what prepareConfined made, when the start failed.
func (c *confinedStart) abort() {
	c.cmd.Close()
	os.RemoveAll(c.tmpDir)
}

func setEnv(env []string, key, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if len(kv) > len(key) && kv[:len(key)+1] == key+"=" {
			continue
		}
		out = append(out, kv)
	}
	return append(out, key+"="+value)
}

// safeName keeps a temp directory's name to letters, digits, '-' and '_'.
func safeName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) > 32 {
		b = b[:32]
	}
	return string(b)
}
