package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSignerChangeReasksThroughTheBinary: a git source whose commit is
// SSH-signed with key A installs with the key named in the consent text,
// extensions.lock and `ext info`; a new commit signed with key B makes
// `ext update` show "signer changed: A → B" and refuse without a terminal
// or --yes, leaving the lock as it was; with --yes key B is pinned.
func TestSignerChangeReasksThroughTheBinary(t *testing.T) {
	t.Parallel()
	cfg, work := filepath.Join(t.TempDir(), "config"), t.TempDir()
	if err := os.MkdirAll(cfg, 0o755); err != nil {
		t.Fatal(err)
	}
	// The update cooldown does not apply to this test's fresh commits.
	if err := os.WriteFile(filepath.Join(cfg, "settings.toml"), []byte("[update]\ncooldown = \"0\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	key := func(name string) (string, string) {
		p := filepath.Join(work, name)
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", p).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v\n%s", err, out)
		}
		out, err := exec.Command("ssh-keygen", "-l", "-f", p+".pub").Output()
		if f := strings.Fields(string(out)); err != nil || len(f) < 2 {
			t.Fatalf("ssh-keygen -l: %v %q", err, out)
		}
		return p, strings.Fields(string(out))[1]
	}
	keyA, fpA := key("a")
	keyB, fpB := key("b")
	pkg := echoPackage(t)
	signedCommit := func(key, msg string) string {
		gitRun(t, pkg, "add", "-A")
		gitRun(t, pkg, "-c", "gpg.format=ssh", "-c", "user.signingkey="+key, "commit", "-q", "-S", "-m", msg)
		return gitRun(t, pkg, "rev-parse", "HEAD")
	}
	gitRun(t, pkg, "init", "-q", "-b", "main")
	first := signedCommit(keyA, "initial")
	src := "file://" + pkg
	proc := func(args ...string) (string, string, int) {
		return yolopProcEnv(t, []string{allowFileGitEnv + "=1"}, cfg, work, "", args...)
	}

	out, errOut, code := proc("ext", "install", src, "--yes")
	if code != 0 {
		t.Fatalf("install exited %d:\n%s\n%s", code, out, errOut)
	}
	mustContain(t, "install", out, "Signature: commit signed by ssh key "+fpA)
	if e := readLock(t, cfg).Entry("echo"); e == nil || e.Signer == nil || e.Signer.Fingerprint != fpA || e.Commit != first {
		t.Fatalf("lock entry after install: %+v", e)
	}
	out, _, _ = proc("ext", "info", "echo")
	mustContain(t, "ext info", out, "signer:   commit signed by ssh key "+fpA+" (pinned)")

	// Key B signs the next commit: asked again, refused without consent.
	b, _ := os.ReadFile(filepath.Join(pkg, "plugin.json"))
	if err := os.WriteFile(filepath.Join(pkg, "plugin.json"), []byte(strings.Replace(string(b), `"version": "0.1.0"`, `"version": "0.1.1"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	signedCommit(keyB, "by another key")
	lockBefore := fileBytes(t, filepath.Join(cfg, "extensions.lock"))
	out, errOut, code = proc("ext", "update", "echo")
	if code == 0 {
		t.Fatalf("update signed by another key applied without consent:\n%s", out)
	}
	mustContain(t, "refused update", out+errOut, "signer changed: "+fpA+" → "+fpB, "--yes")
	if string(fileBytes(t, filepath.Join(cfg, "extensions.lock"))) != string(lockBefore) {
		t.Fatal("a refused update changed extensions.lock")
	}

	out, errOut, code = proc("ext", "update", "echo", "--yes")
	if code != 0 {
		t.Fatalf("update --yes exited %d:\n%s\n%s", code, out, errOut)
	}
	if e := readLock(t, cfg).Entry("echo"); e.Signer == nil || e.Signer.Fingerprint != fpB {
		t.Fatalf("lock signer after the approved update: %+v", e.Signer)
	}
}
