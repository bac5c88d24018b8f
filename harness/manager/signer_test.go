package manager

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/harness/settings"
	"yolop.dev/packaging"
	"yolop.dev/registry/git"
)

// sigGit runs the git CLI hermetically in dir.
func sigGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// sshKey makes an ed25519 key with ssh-keygen: its path and fingerprint.
func sshKey(t *testing.T, name string) (string, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	out, err := exec.Command("ssh-keygen", "-l", "-f", path+".pub").Output()
	if f := strings.Fields(string(out)); err != nil || len(f) < 2 {
		t.Fatalf("ssh-keygen -l: %v %q", err, out)
	}
	return path, strings.Fields(string(out))[1]
}

// commitVersion writes plugin.json at version v and commits it, signed
// with key unless key is empty.
func commitVersion(t *testing.T, repo, v, key string) {
	t.Helper()
	write(t, repo, strings.Replace(wide, `"version":"0.1.0"`, `"version":"`+v+`"`, 1))
	sigGit(t, repo, "add", ".")
	if key == "" {
		sigGit(t, repo, "commit", "-q", "-m", v)
		return
	}
	sigGit(t, repo, "-c", "gpg.format=ssh", "-c", "user.signingkey="+key, "commit", "-q", "-S", "-m", v)
}

func TestSignerPinnedAcrossUpdates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	keyA, fpA := sshKey(t, "a")
	keyB, fpB := sshKey(t, "b")
	repo := t.TempDir()
	sigGit(t, repo, "init", "-q", "-b", "main")
	commitVersion(t, repo, "0.1.0", keyA)
	cfg := t.TempDir()
	m := New(Options{Store: packaging.NewStore(cfg), Settings: settings.New(cfg), AllowFileGit: true})
	var asked []Proposal
	record := func(_ context.Context, p Proposal) error { asked = append(asked, p); return nil }
	refuse := func(_ context.Context, p Proposal) error {
		asked = append(asked, p)
		return packaging.ErrNotApproved
	}

	out, err := m.Install(ctx, InstallRequest{Source: "file://" + repo, Consent: record})
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || !strings.Contains(asked[0].Text, "Signature: commit signed by ssh key "+fpA) {
		t.Fatalf("fresh install consent does not name the key %s: %+v", fpA, asked)
	}
	if s := out.Entry.Signer; s == nil || s.Fingerprint != fpA {
		t.Fatalf("pinned signer %+v, want %s", s, fpA)
	}

	// Same key: applied without a question.
	asked = nil
	commitVersion(t, repo, "0.1.1", keyA)
	out, err = m.Update(ctx, "demo", refuse)
	if err != nil || out.Unchanged || len(asked) != 0 {
		t.Fatalf("update by the same key: %v, unchanged=%v, asked %d times", err, out != nil && out.Unchanged, len(asked))
	}

	lockBytes := func() string {
		b, err := os.ReadFile(filepath.Join(cfg, packaging.LockFileName))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct{ name, key, want string }{
		{"another key", keyB, "signer changed: " + fpA + " → " + fpB},
		{"unsigned", "", "no longer signed (was " + fpA + ")"},
	} {
		commitVersion(t, repo, "0.2.0-"+strings.ReplaceAll(tc.name, " ", ""), tc.key)
		before := lockBytes()
		asked = nil
		if _, err := m.Update(ctx, "demo", refuse); !errors.Is(err, packaging.ErrNotApproved) {
			t.Fatalf("%s: update %v, want it declined", tc.name, err)
		}
		if len(asked) != 1 || !strings.Contains(asked[0].Text, "+ "+tc.want) {
			t.Fatalf("%s: consent text lacks %q: %+v", tc.name, tc.want, asked)
		}
		if lockBytes() != before {
			t.Errorf("%s: a declined update changed extensions.lock", tc.name)
		}
		// Without a way to ask it is refused too.
		if _, err := m.Update(ctx, "demo", nil); !errors.Is(err, packaging.ErrNotApproved) {
			t.Errorf("%s: update without consent: %v", tc.name, err)
		}
		if v, err := m.Store().VerifyInstalled(ctx, "demo"); err != nil || v.Entry.Version != "0.1.1" {
			t.Errorf("%s: installed copy after refusals: %+v, %v", tc.name, v, err)
		}
	}

	// A signature that does not verify is refused outright: no question.
	commitVersion(t, repo, "0.3.0", keyA)
	raw := sigGit(t, repo, "cat-file", "commit", "HEAD")
	forged := filepath.Join(t.TempDir(), "commit")
	if err := os.WriteFile(forged, []byte(strings.Replace(raw, "\n\n0.3.0", "\n\n0.3.0 (altered)", 1)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sigGit(t, repo, "update-ref", "refs/heads/main", sigGit(t, repo, "hash-object", "-w", "-t", "commit", forged))
	asked = nil
	if _, err := m.Update(ctx, "demo", record); !errors.Is(err, git.ErrBadSignature) || len(asked) != 0 {
		t.Fatalf("tampered commit: %v (asked %d times), want ErrBadSignature without a question", err, len(asked))
	}
}
