package doctor

import (
	"encoding/json"
	"path"
	"strings"
)

// probeName returns a tool name the subscription matcher selects, so a
// synthetic event reaches the subscription through the host's own
// matching; ok is false when none could be made.
func probeName(matcher string) (name string, ok bool) {
	if matcher == "*" {
		return "doctor_probe", true
	}
	var b strings.Builder
	for i := 0; i < len(matcher); i++ {
		c := matcher[i]
		switch c {
		case '*':
			// matches the empty string
		case '?':
			b.WriteByte('x')
		case '\\':
			if i+1 < len(matcher) {
				i++
				b.WriteByte(matcher[i])
			}
		case '[':
			end := strings.IndexByte(matcher[i+1:], ']')
			if end < 0 {
				return "", false
			}
			class := matcher[i : i+1+end+1]
			i += end + 1
			picked := false
			for _, cand := range "abcdefghijklmnopqrstuvwxyz_0123456789-ABCDEFGHIJKLMNOPQRSTUVWXYZ" {
				if m, _ := path.Match(class, string(cand)); m {
					b.WriteRune(cand)
					picked = true
					break
				}
			}
			if !picked {
				return "", false
			}
		default:
			b.WriteByte(c)
		}
	}
	name = b.String()
	if m, err := path.Match(matcher, name); err != nil || !m || name == "" {
		return "", false
	}
	return name, true
}

// syntheticArgs returns plausible arguments for a tool the host itself
// provides, so a guard written against its real arguments sees a
// realistic event; other tools get {}.
func syntheticArgs(tool string) json.RawMessage {
	switch tool {
	case "bash", "shell", "exec":
		return json.RawMessage(`{"command":"echo yolop doctor"}`)
	case "read", "read_file", "view":
		return json.RawMessage(`{"path":"README.md"}`)
	case "write", "write_file", "edit", "edit_file":
		return json.RawMessage(`{"path":"doctor-probe.txt","content":"yolop doctor"}`)
	}
	return json.RawMessage(`{}`)
}
