package scaffold

// SkillName is skillName, for the external tests.
var SkillName = skillName
