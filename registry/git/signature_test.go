package git

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sshKey makes an ed25519 key pair with ssh-keygen and returns the private
// key's path and the key's SHA256 fingerprint as ssh-keygen prints it.
func sshKey(t *testing.T, name string) (path, fingerprint string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	out, err := exec.Command("ssh-keygen", "-l", "-f", path+".pub").Output()
	if err != nil {
		t.Fatalf("ssh-keygen -l: %v", err)
	}
	f := strings.Fields(string(out))
	if len(f) < 2 || !strings.HasPrefix(f[1], "SHA256:") {
		t.Fatalf("ssh-keygen -l printed %q", out)
	}
	return path, f[1]
}

// sshGit runs git with SSH signing by key.
func sshGit(t *testing.T, dir, key string, args ...string) string {
	t.Helper()
	return gitCmd(t, dir, append([]string{"-c", "gpg.format=ssh", "-c", "user.signingkey=" + key}, args...)...)
}

// sigRepo is a repository whose main branch has one commit writing
// plugin.json; signKey, if set, signs it.
func sigRepo(t *testing.T, signKey string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "src")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, dir, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(dir, "plugin.json"), `{"name":"demo"}`+"\n", 0o644)
	gitCmd(t, dir, "add", ".")
	if signKey != "" {
		sshGit(t, dir, signKey, "commit", "-q", "-S", "-m", "signed")
	} else {
		gitCmd(t, dir, "commit", "-q", "-m", "unsigned")
	}
	return dir
}

func TestFetchRecordsSSHSigner(t *testing.T) {
	t.Parallel()
	key, fp := sshKey(t, "a")
	dir := sigRepo(t, key)
	res, err := Fetch(context.Background(), "file://"+dir, "main", filepath.Join(t.TempDir(), "out"), testOpts)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Signer
	if s == nil || s.Kind != SignerSSH || s.Fingerprint != fp || !s.Verified || s.Object != "commit" {
		t.Fatalf("signer = %+v, want a verified ssh signer %s on the commit", s, fp)
	}
	if got := s.String(); got != "ssh key "+fp {
		t.Errorf("String() = %q", got)
	}
	// ResolveOnly reports the same signer without exporting.
	r2, err := ResolveOnly(context.Background(), "file://"+dir, "main", testOpts)
	if err != nil || r2.Signer == nil || r2.Signer.Fingerprint != fp {
		t.Fatalf("ResolveOnly: %+v, %v", r2.Signer, err)
	}
}

func TestFetchUnsignedHasNoSigner(t *testing.T) {
	t.Parallel()
	dir := sigRepo(t, "")
	res, err := Fetch(context.Background(), "file://"+dir, "", filepath.Join(t.TempDir(), "out"), testOpts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Signer != nil {
		t.Fatalf("unsigned commit: signer %+v", res.Signer)
	}
}

// An unsigned commit resolved through an SSH-signed annotated tag is
// signed by the tag's key.
func TestFetchSignedTag(t *testing.T) {
	t.Parallel()
	key, fp := sshKey(t, "tagger")
	dir := sigRepo(t, "")
	sshGit(t, dir, key, "tag", "-s", "-m", "release", "v1")
	res, err := Fetch(context.Background(), "file://"+dir, "v1", filepath.Join(t.TempDir(), "out"), testOpts)
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Signer; s == nil || s.Fingerprint != fp || s.Object != "tag" {
		t.Fatalf("signer = %+v, want the tag's key %s", s, fp)
	}
}

// A commit whose content was changed after signing (the signature copied
// onto another message) is refused, and nothing is exported.
func TestFetchRefusesTamperedSignature(t *testing.T) {
	t.Parallel()
	key, fp := sshKey(t, "a")
	dir := sigRepo(t, key)
	raw := gitCmd(t, dir, "cat-file", "commit", "HEAD")
	forged := strings.Replace(raw, "\n\nsigned", "\n\nsigned, honest", 1)
	if forged == raw {
		t.Fatalf("commit text has no message to alter:\n%s", raw)
	}
	obj := filepath.Join(t.TempDir(), "commit")
	writeFile(t, obj, forged+"\n", 0o644)
	h := gitCmd(t, dir, "hash-object", "-w", "-t", "commit", obj)
	gitCmd(t, dir, "update-ref", "refs/heads/main", h)
	dest := filepath.Join(t.TempDir(), "out")
	_, err := Fetch(context.Background(), "file://"+dir, "main", dest, testOpts)
	if !errors.Is(err, ErrBadSignature) {
		t.Fatalf("Fetch of a tampered commit: %v, want ErrBadSignature", err)
	}
	if !strings.Contains(err.Error(), fp) {
		t.Errorf("the error does not name the key %s: %v", fp, err)
	}
	if _, serr := os.Stat(dest); !os.IsNotExist(serr) {
		t.Errorf("dest exists after a refused fetch: %v", serr)
	}
	assertNoStaging(t, filepath.Dir(dest))
}

// gpgEnv makes a GnuPG home with one signing key and returns the
// environment that selects it and the key's fingerprint.
func gpgEnv(t *testing.T) (env []string, fingerprint string) {
	t.Helper()
	home, err := os.MkdirTemp("", "gpg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = exec.Command("gpgconf", "--homedir", home, "--kill", "all").Run()
		os.RemoveAll(home)
	})
	env = append(os.Environ(), "GNUPGHOME="+home)
	run := func(args ...string) string {
		cmd := exec.Command("gpg", append([]string{"--batch", "--no-tty"}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("gpg %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("--passphrase", "", "--quick-gen-key", "Signer <signer@example.com>", "ed25519", "sign", "never")
	for _, line := range strings.Split(run("--with-colons", "--list-keys", "signer@example.com"), "\n") {
		if f := strings.Split(line, ":"); len(f) > 9 && f[0] == "fpr" {
			return env, f[9]
		}
	}
	t.Fatal("gpg listed no fingerprint")
	return nil, ""
}

func TestFetchOpenPGPSigner(t *testing.T) {
	t.Parallel()
	env, fp := gpgEnv(t)
	dir := sigRepo(t, "")
	writeFile(t, filepath.Join(dir, "README"), "x\n", 0o644)
	gitCmd(t, dir, "add", ".")
	cmd := exec.Command("git", "-c", "user.signingkey="+fp, "commit", "-q", "-S", "-m", "pgp")
	cmd.Dir = dir
	cmd.Env = append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git commit -S: %v\n%s", err, out)
	}
	export := exec.Command("gpg", "--batch", "--armor", "--export", fp)
	export.Env = env
	ring, err := export.Output()
	if err != nil {
		t.Fatal(err)
	}
	keyID := fp[len(fp)-16:]

	// Without a key the signer is named by key id and says it is not verified.
	res, err := ResolveOnly(context.Background(), "file://"+dir, "main", testOpts)
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Signer; s == nil || s.Kind != SignerOpenPGP || s.Verified || s.KeyID != keyID || s.Fingerprint != "" {
		t.Fatalf("no key: signer %+v, want unverified key id %s", s, keyID)
	} else if got := s.String(); got != "OpenPGP key "+keyID+" (not verified: no public key)" {
		t.Errorf("String() = %q", got)
	}

	// With the key it verifies and names the fingerprint and user id.
	opts := testOpts
	var asked string
	opts.OpenPGPKeys = func(id string) (string, error) { asked = id; return string(ring), nil }
	res, err = ResolveOnly(context.Background(), "file://"+dir, "main", opts)
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Signer; s == nil || !s.Verified || s.Fingerprint != fp || s.Principal != "Signer <signer@example.com>" {
		t.Fatalf("with key: signer %+v, want verified %s", s, fp)
	}
	if asked != keyID {
		t.Errorf("asked for key %q, want %q", asked, keyID)
	}

	// A tampered OpenPGP-signed commit is refused when the key is known.
	raw := gitCmd(t, dir, "cat-file", "commit", "HEAD")
	obj := filepath.Join(t.TempDir(), "commit")
	writeFile(t, obj, strings.Replace(raw, "\n\npgp", "\n\npgp!", 1)+"\n", 0o644)
	gitCmd(t, dir, "update-ref", "refs/heads/main", gitCmd(t, dir, "hash-object", "-w", "-t", "commit", obj))
	if _, err := ResolveOnly(context.Background(), "file://"+dir, "main", opts); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("tampered OpenPGP commit: %v, want ErrBadSignature", err)
	}
}
