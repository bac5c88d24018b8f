package hostgrant

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"yolop.dev/packaging"
)

// A grant serves only the skills its approval pinned: a skill directory
// added to a path source after the session loaded it is not handed to the
// session.
func TestFromManifestServesOnlyPinnedSkills(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(`{"name":"s","version":"1","yolop":{"protocol_version":"1.0",
		"capabilityServer":{"command":"srv"},"skills":true}}`), 0o644)
	skill := func(name string) {
		os.MkdirAll(filepath.Join(dir, "skills", name), 0o755)
		os.WriteFile(filepath.Join(dir, "skills", name, "SKILL.md"), []byte("---\nname: "+name+"\ndescription: A skill.\n---\n"), 0o644)
	}
	skill("one")
	approved, err := packaging.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	skill("two") // after approval
	g, err := FromManifest(approved)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{filepath.Join(dir, "skills", "one")}, g.Skills); d != "" {
		t.Errorf("skills (-want +got):\n%s", d)
	}
	// Without pins (an approval from before skill pins), every skill found
	// is served.
	approved.SkillPins = nil
	if g, _ := FromManifest(approved); len(g.Skills) != 2 {
		t.Errorf("unpinned skills = %q, want both", g.Skills)
	}
}
