package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"yolop.dev/core"
	"yolop.dev/core/skill"
)

// skillPackage writes a package directory with skills/<name>/SKILL.md for
// each name and returns it with the skill directories.
func skillPackage(t *testing.T, names ...string) (string, []string) {
	t.Helper()
	pkg := t.TempDir()
	var dirs []string
	for _, n := range names {
		d := filepath.Join(pkg, "skills", n)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		text := "---\nname: " + n + "\ndescription: How to " + n + ".\n---\n# " + n + "\nSteps for " + n + ".\n"
		if err := os.WriteFile(filepath.Join(d, skill.FileName), []byte(text), 0o444); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	return pkg, dirs
}

func skillGrant(name, pkg string, dirs []string) Grant {
	return Grant{Name: name, ProtocolVersion: "1.0", Server: core.ServerSpec{Name: name, Command: "never-started", PackageDir: pkg}, Skills: dirs}
}

// TestSessionSkillsComeFromActiveExtensionsOnly: an extension's skills
// are listed and readable while it is active, and gone once it is
// deactivated; none of it starts the server.
func TestSessionSkillsComeFromActiveExtensionsOnly(t *testing.T) {
	pkgA, dirsA := skillPackage(t, "deploy", "review")
	pkgB, dirsB := skillPackage(t, "review")
	pkgC, dirsC := skillPackage(t, "later")
	s := newTestSession(t, SessionOptions{Grants: []Grant{skillGrant("a", pkgA, dirsA), skillGrant("b", pkgB, dirsB)}})

	var got []string
	for _, sk := range s.Skills() {
		got = append(got, sk.Qualified()+" "+sk.Description)
	}
	want := "a:deploy How to deploy.|a:review How to review.|b:review How to review."
	if strings.Join(got, "|") != want {
		t.Fatalf("Skills = %q, want %q", strings.Join(got, "|"), want)
	}

	sk, text, err := s.ReadSkill("deploy")
	if err != nil || sk.Extension != "a" || !strings.Contains(text, "Steps for deploy.") {
		t.Fatalf("ReadSkill(deploy) = %+v, %q, %v", sk, text, err)
	}
	if _, _, err := s.ReadSkill("review"); !errors.Is(err, ErrNoSuchSkill) || !strings.Contains(err.Error(), "a:review, b:review") {
		t.Fatalf("an ambiguous name = %v", err)
	}
	if sk, _, err := s.ReadSkill("b:review"); err != nil || sk.Extension != "b" {
		t.Fatalf("ReadSkill(b:review) = %+v, %v", sk, err)
	}
	for _, bad := range []string{"../a/skills/deploy", "deploy/../../x", "/etc/passwd", "a:../deploy", "nope", "c:deploy"} {
		if _, text, err := s.ReadSkill(bad); !errors.Is(err, ErrNoSuchSkill) || text != "" {
			t.Errorf("ReadSkill(%q) = %q, %v; want ErrNoSuchSkill", bad, text, err)
		}
	}

	s.Deactivate("a")
	s.Activate(skillGrant("c", pkgC, dirsC))
	s.BeginTurn(context.Background())
	got = nil
	for _, sk := range s.Skills() {
		got = append(got, sk.Qualified())
	}
	if strings.Join(got, ",") != "b:review,c:later" {
		t.Fatalf("after disabling a and enabling c, Skills = %v", got)
	}
	if _, _, err := s.ReadSkill("deploy"); !errors.Is(err, ErrNoSuchSkill) {
		t.Fatalf("a disabled extension's skill is still readable: %v", err)
	}
	for _, st := range s.Stats() {
		if st.State != StateIdle {
			t.Errorf("extension %s is %s; listing skills must not start it", st.Name, st.State)
		}
	}
}

// TestSessionSkillsRefuseSymlinksOutOfThePackage: a skill directory or a
// SKILL.md that is a symlink leaving the package is neither listed nor
// read, and a malformed SKILL.md is skipped.
func TestSessionSkillsRefuseSymlinksOutOfThePackage(t *testing.T) {
	pkg, dirs := skillPackage(t, "good")
	outside, outDirs := skillPackage(t, "stolen", "linked")
	_ = outside
	escDir := filepath.Join(pkg, "skills", "stolen")
	if err := os.Symlink(outDirs[0], escDir); err != nil {
		t.Fatal(err)
	}
	escFile := filepath.Join(pkg, "skills", "linked")
	os.MkdirAll(escFile, 0o755)
	if err := os.Symlink(filepath.Join(outDirs[1], skill.FileName), filepath.Join(escFile, skill.FileName)); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(pkg, "skills", "bad")
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(bad, skill.FileName), []byte("no frontmatter"), 0o644)

	log, lb := testLogger()
	s := newTestSession(t, SessionOptions{Logger: log, Grants: []Grant{skillGrant("a", pkg, append(dirs, escDir, escFile, bad))}})
	var got []string
	for _, sk := range s.Skills() {
		got = append(got, sk.Name)
	}
	if strings.Join(got, ",") != "good" {
		t.Fatalf("Skills = %v, want only good", got)
	}
	for _, n := range []string{"stolen", "linked", "bad"} {
		if _, text, err := s.ReadSkill(n); err == nil || text != "" {
			t.Errorf("ReadSkill(%s) = %q, %v", n, text, err)
		}
	}
	if !strings.Contains(lb.String(), "skill leaves its package") || !strings.Contains(lb.String(), "invalid SKILL.md") {
		t.Fatalf("the skipped skills were not logged:\n%s", lb.String())
	}
}
