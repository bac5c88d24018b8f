package fetch

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/packaging"
	"yolop.dev/registry/git"
)

func runGit(t *testing.T, dir string, args ...string) string {
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

// A source naming a signed annotated tag keeps the tag's signer when the
// commit was fetched by its id (as the update cooldown does), the Git
// fetcher reports it, and a source naming the commit itself does not
// borrow it.
func TestTagSignerSurvivesFetchByCommit(t *testing.T) {
	t.Parallel()
	key := filepath.Join(t.TempDir(), "k")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	out, err := exec.Command("ssh-keygen", "-l", "-f", key+".pub").Output()
	if err != nil {
		t.Fatal(err)
	}
	fp := strings.Fields(string(out))[1]
	repo := t.TempDir()
	runGit(t, repo, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(repo, "plugin.json"), []byte(`{"name":"demo"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	runGit(t, repo, "add", ".")
	runGit(t, repo, "commit", "-q", "-m", "unsigned")
	runGit(t, repo, "-c", "gpg.format=ssh", "-c", "user.signingkey="+key, "tag", "-s", "-m", "release", "v1")
	commit := runGit(t, repo, "rev-parse", "HEAD")
	url := "file://" + repo
	opts := git.Options{AllowFile: true}
	ctx := context.Background()

	byID, err := git.Fetch(ctx, url, commit, filepath.Join(t.TempDir(), "out"), opts)
	if err != nil || byID.Signer != nil {
		t.Fatalf("fetch by commit id: signer %+v, %v (want none: the commit is unsigned)", byID.Signer, err)
	}
	s, err := signerOf(ctx, packaging.Source{Kind: packaging.SourceGit, URL: url, Rev: "v1"}, byID, opts)
	if err != nil || s == nil || s.Fingerprint != fp || s.Object != "tag" {
		t.Fatalf("signer through the tag: %+v, %v; want %s", s, err, fp)
	}
	for _, rev := range []string{"", commit} {
		if s, err := signerOf(ctx, packaging.Source{Kind: packaging.SourceGit, URL: url, Rev: rev}, byID, opts); err != nil || s != nil {
			t.Errorf("rev %q borrows a signer: %+v, %v", rev, s, err)
		}
	}

	fetch, _, err := Git{AllowFile: true}.Open(packaging.Source{Kind: packaging.SourceGit, URL: url, Rev: "v1"}, Request{})
	if err != nil {
		t.Fatal(err)
	}
	fr, err := fetch(ctx, filepath.Join(t.TempDir(), "staged"))
	if err != nil || fr.Signer == nil || fr.Signer.Fingerprint != fp {
		t.Fatalf("Git fetcher: %+v, %v", fr.Signer, err)
	}
}
