package host

import (
	"fmt"
	"slices"
	"strings"

	"yolop.dev/core/skill"
)

// A SkillInfo is one skill a capability of the session contributes: a
// directory holding a SKILL.md ([skill.FileName]).
type SkillInfo struct {
	// Name is the skill's name, from its frontmatter (and its directory).
	Name string
	// Description says what the skill does and when to use it.
	Description string
	// Extension names the contributor: the extension's name, or a
	// built-in's capability name.
	Extension string
	// Dir is the skill's directory.
	Dir string

	root string // the package the skill must stay inside
}

// Qualified is "<extension>:<name>", the name [Session.ReadSkill] takes
// when two contributors ship a skill of the same name.
func (s SkillInfo) Qualified() string { return s.Extension + ":" + s.Name }

// Skills lists the skills contributed by the session's active
// capabilities, in harness order: an extension contributes only while it
// is enabled in the session (after [Session.Activate], before
// [Session.Deactivate], from the next turn boundary). A skill whose
// SKILL.md is missing, malformed, or leaves its package through a symlink
// is skipped with a warning in the host log. Nothing is executed: skills
// are read by the host, never through the extension's server.
func (s *Session) Skills() []SkillInfo {
	s.mu.Lock()
	caps := s.caps // never mutated in place: BeginTurn replaces the slice
	s.mu.Unlock()
	var out []SkillInfo
	for _, c := range caps {
		owner, root := c.Name(), ""
		if e, ok := c.(*Extension); ok {
			owner, root = e.ExtName(), e.Grant().Server.PackageDir
		}
		for _, dir := range c.Skills() {
			r := root
			if r == "" {
				r = dir
			}
			if _, err := skill.ReadFile(r, dir); err != nil {
				s.log.Warn("skill skipped", "capability", c.Name(), "dir", dir, "error", err)
				continue
			}
			m, err := skill.Load(dir)
			if err != nil {
				s.log.Warn("skill skipped", "capability", c.Name(), "dir", dir, "error", err)
				continue
			}
			out = append(out, SkillInfo{Name: m.Name, Description: m.Description, Extension: owner, Dir: dir, root: r})
		}
	}
	return out
}

// ReadSkill returns a skill of the session and the text of its SKILL.md,
// by name, or by "<extension>:<name>" when two contributors ship the same
// name. It only ever reads: the name must be a skill name (never a path,
// so "../x" is refused), it must be one [Session.Skills] lists, and the
// file is read only if its real path stays inside the contributing
// package. An unknown name fails matching [ErrNoSuchSkill].
func (s *Session) ReadSkill(name string) (SkillInfo, string, error) {
	owner, bare, qualified := strings.Cut(name, ":")
	if !qualified {
		bare, owner = owner, ""
	}
	if err := skill.ValidName(bare); err != nil {
		return SkillInfo{}, "", newError(ErrNoSuchSkill, err, "%q is not a skill name: %v", name, err)
	}
	var found []SkillInfo
	for _, sk := range s.Skills() {
		if sk.Name == bare && (owner == "" || sk.Extension == owner) {
			found = append(found, sk)
		}
	}
	switch len(found) {
	case 0:
		return SkillInfo{}, "", newError(ErrNoSuchSkill, nil, "no skill %q in this session", name)
	case 1:
	default:
		names := make([]string, len(found))
		for i, sk := range found {
			names[i] = sk.Qualified()
		}
		slices.Sort(names)
		return SkillInfo{}, "", newError(ErrNoSuchSkill, nil, "skill %q is contributed by several extensions; name one of %s", name, strings.Join(names, ", "))
	}
	sk := found[0]
	data, err := skill.ReadFile(sk.root, sk.Dir)
	if err != nil {
		return SkillInfo{}, "", fmt.Errorf("skill %s: %w", sk.Qualified(), err)
	}
	return sk, string(data), nil
}
