package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// The dialogue goldens, schema/yep/v1/dialogues/, are recorded exchanges
// (see yolop.dev/harness/record): each section one server instance, each
// line a message marked "→ " (host to server) or "← " (server to host).
const dialoguesDir = "schema/yep/v1/dialogues"

// TestDialogueGoldensConform validates every message of every dialogue
// golden against schema.json; a response is checked against the method of
// the request it answers, in the other direction.
func TestDialogueGoldensConform(t *testing.T) {
	comp, _ := loadSchema(t)
	files, err := filepath.Glob(filepath.Join(repoRoot(t), filepath.FromSlash(dialoguesDir), "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dialogue goldens in %s (%v)", dialoguesDir, err)
	}
	for _, f := range files {
		ar, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, sec := range ar.Files {
			// Requests one side sends are answered by the other: validate
			// each side's requests with the answers they get.
			var hostSide, serverSide []string
			hostReqs, serverReqs := map[string]string{}, map[string]string{}
			for _, l := range strings.Split(string(sec.Data), "\n") {
				var env struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				fromHost := strings.HasPrefix(l, "→ ")
				msg := strings.TrimPrefix(strings.TrimPrefix(l, "→ "), "← ")
				if strings.TrimSpace(msg) == "" {
					continue
				}
				if msg == l {
					t.Errorf("%s, section %s: a line without a direction mark: %s", f, sec.Name, l)
					continue
				}
				_ = json.Unmarshal([]byte(msg), &env)
				isAnswer := env.Method == ""
				switch {
				case fromHost && !isAnswer:
					hostSide = append(hostSide, msg)
					if env.ID != nil {
						hostReqs[string(env.ID)] = env.Method
					}
				case !fromHost && isAnswer:
					hostSide = append(hostSide, msg)
				case !fromHost:
					serverSide = append(serverSide, msg)
					if env.ID != nil {
						serverReqs[string(env.ID)] = env.Method
					}
				default:
					serverSide = append(serverSide, msg)
				}
			}
			where := filepath.Base(f) + " section " + sec.Name
			validateMessages(t, comp, where+" (host requests)", hostSide, hostReqs)
			validateMessages(t, comp, where+" (server requests)", serverSide, serverReqs)
		}
	}
}
