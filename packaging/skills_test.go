package packaging

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func skillMD(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n# " + name + "\n"
}

// TestLoadValidatesSkillFrontmatter: a package that declares skills has
// each skills/<name>/SKILL.md's frontmatter checked at load (so at
// install), and the consent summary lists the skills with their
// descriptions.
func TestLoadValidatesSkillFrontmatter(t *testing.T) {
	withSkills := manifest(func(f obj) { f["skills"] = true })
	dir := pkg(t, map[string]any{
		"plugin.json":               withSkills,
		"skills/deploy/SKILL.md":    skillMD("deploy", "Ship a release: tag, build, publish."),
		"skills/review/SKILL.md":    skillMD("review", "Review a change\n  before it lands."),
		"skills/notes/README.md":    "not a skill",
		"skills/loose-file.md":      "ignored",
		"skills/empty/.keep":        "",
		"skills/quoted/SKILL.md":    "---\nname: quoted\ndescription: \"Uses: colons\"\n---\n",
		"skills/folded/SKILL.md":    "---\nname: folded\ndescription: >\n  Folded\n  text.\nlicense: MIT\n---\n",
		"skills/deploy/scripts/x":   "#!/bin/sh\n",
		"skills/review/ref/more.md": "more",
	})
	m, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range m.Skills {
		names = append(names, s.Name+"="+s.Description)
	}
	if got := strings.Join(names, "|"); got != "deploy=Ship a release: tag, build, publish.|folded=Folded text.|quoted=Uses: colons|review=Review a change before it lands." {
		t.Fatalf("skills = %q", got)
	}
	if !strings.Contains(strings.Join(m.Warnings, "\n"), "skills/empty has no SKILL.md") {
		t.Errorf("warnings = %q", m.Warnings)
	}
	s := Summary(m)
	for _, want := range []string{"Skills (4, read-only text the agent may read):", "    - deploy: Ship a release: tag, build, publish.", "    - folded: Folded text."} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}

	// Without the facet's skills, nothing is read or listed.
	m, err = Load(pkg(t, map[string]any{"plugin.json": manifest(nil), "skills/bad/SKILL.md": "no frontmatter"}))
	if err != nil || len(m.Skills) != 0 || !strings.Contains(Summary(m), "Skills: no") {
		t.Fatalf("a package without skills: %v, %+v", err, m)
	}
}

func TestLoadRefusesBadSkills(t *testing.T) {
	withSkills := manifest(func(f obj) { f["skills"] = true })
	for _, tc := range []struct {
		name, file, text, want string
	}{
		{"no frontmatter", "skills/a/SKILL.md", "# just text", "skills/a/SKILL.md: invalid SKILL.md: it must start with a '---' line"},
		{"no description", "skills/a/SKILL.md", "---\nname: a\n---\n", "no description"},
		{"name is not the directory", "skills/a/SKILL.md", skillMD("b", "d"), `names skill "b" but its directory is "a"`},
		{"bad name", "skills/A/SKILL.md", skillMD("A", "d"), "must be lowercase letters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(pkg(t, map[string]any{"plugin.json": withSkills, tc.file: tc.text}))
			if !errors.Is(err, ErrInvalidManifest) || !strings.Contains(err.Error(), "yolop.skills: ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load = %v; want an invalid manifest with %q", err, tc.want)
			}
		})
	}

	t.Run("SKILL.md is a symlink out of the package", func(t *testing.T) {
		outside := filepath.Join(t.TempDir(), "SKILL.md")
		os.WriteFile(outside, []byte(skillMD("a", "d")), 0o644)
		dir := pkg(t, map[string]any{"plugin.json": withSkills})
		os.MkdirAll(filepath.Join(dir, "skills", "a"), 0o755)
		if err := os.Symlink(outside, filepath.Join(dir, "skills", "a", "SKILL.md")); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(dir); !errors.Is(err, ErrEscapesPackage) {
			t.Fatalf("Load = %v; want ErrEscapesPackage", err)
		}
	})
}
