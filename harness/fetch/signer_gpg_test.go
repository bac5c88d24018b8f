package fetch

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/packaging"
)

// An OpenPGP-signed commit is verified with the key from the user's GnuPG
// keyring (GNUPGHOME) by default; a key the keyring lacks is no key, not an
// error, and the signer is then named by key id as not verified.
func TestGPGKeysFromTheUsersKeyring(t *testing.T) {
	home, err := os.MkdirTemp("", "gpg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = exec.Command("gpgconf", "--homedir", home, "--kill", "all").Run()
		os.RemoveAll(home)
	})
	t.Setenv("GNUPGHOME", home)
	gpg := func(args ...string) string {
		out, err := exec.Command("gpg", append([]string{"--batch", "--no-tty"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("gpg %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	gpg("--passphrase", "", "--quick-gen-key", "Author <author@example.com>", "ed25519", "sign", "never")
	var fp string
	for _, line := range strings.Split(gpg("--with-colons", "--list-keys"), "\n") {
		if f := strings.Split(line, ":"); len(f) > 9 && f[0] == "fpr" && fp == "" {
			fp = f[9]
		}
	}
	repo := t.TempDir()
	runGit(t, repo, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(repo, "plugin.json"), []byte(`{"name":"demo"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	runGit(t, repo, "add", ".")
	runGit(t, repo, "-c", "user.signingkey="+fp, "commit", "-q", "-S", "-m", "signed")

	if ring, err := GPGKeys(fp[len(fp)-16:]); err != nil || !strings.Contains(ring, "BEGIN PGP PUBLIC KEY BLOCK") {
		t.Fatalf("GPGKeys of a key in the keyring: %v %q", err, ring)
	}
	if ring, err := GPGKeys("0123456789ABCDEF"); err != nil || strings.TrimSpace(ring) != "" {
		t.Fatalf("GPGKeys of an unknown key: %v %q", err, ring)
	}
	src := packaging.Source{Kind: packaging.SourceGit, URL: "file://" + repo, Rev: "main"}
	fetch, _, err := Git{AllowFile: true}.Open(src, Request{})
	if err != nil {
		t.Fatal(err)
	}
	fr, err := fetch(context.Background(), filepath.Join(t.TempDir(), "staged"))
	if err != nil {
		t.Fatal(err)
	}
	if s := fr.Signer; s == nil || !s.Verified || s.Fingerprint != fp || s.Principal != "Author <author@example.com>" {
		t.Fatalf("signer %+v, want verified %s", s, fp)
	}
	if got := fr.Signer.Describe(); got != "commit signed by OpenPGP key "+fp+" (Author <author@example.com>)" {
		t.Errorf("Describe() = %q", got)
	}
}
