package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/transport/stdio/confine"
)

// probeServer is a raw YEP server (standard library only) with one tool,
// probe, that tries to read a file, write a file, connect to a TCP port and
// run a program, and reports each attempt: "read: ok" or "read: denied (…)".
const probeServer = `#!/usr/bin/env python3
import json, os, socket, subprocess, sys

secret, written, port = sys.argv[1], sys.argv[2], int(sys.argv[3])

def attempt(name, fn):
    try:
        fn()
        return name + ": ok"
    except Exception as e:
        return "%s: denied (%s)" % (name, type(e).__name__)

def probe():
    return "\n".join([
        attempt("read", lambda: open(secret).read()),
        attempt("write", lambda: open(written, "w").write("x")),
        attempt("connect", lambda: socket.create_connection(("127.0.0.1", port), timeout=5).close()),
        attempt("exec", lambda: subprocess.run(["/bin/true"], check=True)),
    ])

def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()

for line in sys.stdin:
    msg = json.loads(line)
    method, rid = msg.get("method"), msg.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {"protocol_version": "1.0", "name": "probe", "capabilities": ["tools"], "capability_params": {}}})
    elif method == "tool/call":
        send({"jsonrpc": "2.0", "id": rid, "result": {"output": probe()}})
    elif method == "shutdown":
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
    elif method == "exit":
        sys.exit(0)
    elif rid is not None and method is not None:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no " + method}})
`

// A path-installed stdio server runs under the approved sandbox: reading
// and writing outside it, connecting to an undeclared port and running a
// program all fail (the default sandbox). A manifest that widens the
// sandbox keeps the extension off until `ext update --yes` approves it;
// then the same four operations work.
func TestSandboxConfinesAndWideningNeedsConsent(t *testing.T) {
	t.Parallel()
	if confine.KernelABI() < 4 {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI runs on a kernel with Landlock ABI 4 or later (TCP rules); this one has ABI %d", confine.KernelABI())
		}
		t.Skip("needs Landlock ABI 4 (TCP rules); this kernel has ABI", confine.KernelABI())
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 is needed to run the probe server")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	outside, work, cfg, pkg := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret")
	os.WriteFile(secret, []byte("s3cret\n"), 0o600)
	written := filepath.Join(outside, "written")
	os.MkdirAll(filepath.Join(pkg, "bin"), 0o755)
	if err := os.WriteFile(filepath.Join(pkg, "bin", "probe-server"), []byte(probeServer), 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := func(sandbox string) {
		t.Helper()
		m := fmt.Sprintf(`{"name":"probe","version":"%s","yolop":{"protocol_version":"1.0",
  "capabilityServer":{"command":"probe-server","args":[%q,%q,"%d"]},
  "tools":[{"name":"probe","description":"Try forbidden things.","input_schema":{"type":"object"},"never_defer":true}]%s}}`,
			map[bool]string{true: "0.2.0", false: "0.1.0"}[sandbox != ""], secret, written, port, sandbox)
		if err := os.WriteFile(filepath.Join(pkg, "plugin.json"), []byte(m), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	session := func() string {
		// The sessions start the server through the host binary itself,
		// the launcher a yolop with nothing beside it uses (the other
		// tests use the small launcher, launchertest).
		out, errOut, code := yolopProcEnv(t, []string{confine.LauncherEnv + "="}, cfg, work, "/call probe {}\n/quit\n", "session", "--workspace", work)
		if code != 0 {
			t.Fatalf("session: exit %d\n%s\n%s", code, out, errOut)
		}
		return out + errOut
	}

	manifest("")
	out := must(t, cfg, work, "ext", "install", pkg, "--yes")
	mustContain(t, "install", out, "Sandbox (the default: the manifest declares none):", "Sandbox on this machine: sandboxed (Landlock ABI")
	must(t, cfg, work, "ext", "enable", "probe")
	out = session()
	mustContain(t, "confined session", out, "read: denied (PermissionError)", "write: denied (PermissionError)", "connect: denied (PermissionError)", "exec: denied (PermissionError)")
	if _, err := os.Stat(written); err == nil {
		t.Fatal("the confined server wrote outside its sandbox")
	}

	manifest(fmt.Sprintf(`,"sandbox":{"fs":[{"path":"${workspace}","access":"rw"},{"path":"${package}"},{"path":%q,"access":"rw"}],"net":{"connect":[%d]},"exec":true}`, outside, port))
	out = session()
	if strings.Contains(out, "read: ok") || !strings.Contains(out, "sandbox: may run other programs") {
		t.Fatalf("a widened sandbox ran without consent:\n%s", out)
	}
	out = must(t, cfg, work, "ext", "update", "probe", "--yes")
	mustContain(t, "update", out, "+ sandbox: may connect to TCP port "+fmt.Sprint(port), "+ sandbox: may run other programs", "+ sandbox: "+outside+" (read-write)")
	out = session()
	mustContain(t, "widened session", out, "read: ok", "write: ok", "connect: ok", "exec: ok")
}
