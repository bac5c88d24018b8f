package repl

import "yolop.dev/harness/config"

// sandboxState is the sandbox line of an extension's /status entry: what
// this machine enforces of its native server's sandbox and where the rules
// come from ([config.SandboxState]); "" for an extension without one.
func (r *REPL) sandboxState(name string) string {
	e, ok := r.o.Session.Extension(name)
	if !ok {
		return ""
	}
	return config.SandboxState(e.Grant().Server)
}
