package record_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"yolop.dev/core"
	"yolop.dev/core/transporttest"
	"yolop.dev/harness/record"
)

// rawServer answers each line it reads with the lines script gives for it;
// a nil answer ends the server.
func rawServer(script func(line string) []string) transporttest.Server {
	return func(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
		sc := bufio.NewScanner(stdin)
		for sc.Scan() {
			out := script(sc.Text())
			if out == nil {
				return nil
			}
			for _, l := range out {
				if _, err := io.WriteString(stdout, l+"\n"); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

const askDialogue = `volatile: id
-- asker --
→ {"jsonrpc":"2.0","id":1,"method":"tool/call","params":{"name":"greet"}}
← {"jsonrpc":"2.0","id":1,"method":"ui/ask","params":{"prompt":"Your name?"}}
→ {"jsonrpc":"2.0","id":1,"result":{"answer":"Ada"}}
← {"jsonrpc":"2.0","id":1,"result":{"output":"hello, Ada"}}
`

func replay(t *testing.T, dialogue string, server transporttest.Server) error {
	t.Helper()
	f, err := record.Parse("test.txtar", []byte(dialogue))
	if err != nil {
		t.Fatal(err)
	}
	tr := &transporttest.Transport{Servers: map[string]transporttest.Server{"asker": server}}
	inst, err := tr.Start(context.Background(), core.ServerSpec{Name: "asker"})
	if err != nil {
		t.Fatal(err)
	}
	return record.Replay(context.Background(), inst, f.Dialogues[0], record.Options{Volatile: f.Volatile})
}

// The host's answer to a server's request goes back with the id the server
// used this time, not the recorded one.
func TestReplayAnswersAServerRequestWithItsNewID(t *testing.T) {
	var answeredID string
	err := replay(t, askDialogue, rawServer(func(l string) []string {
		switch {
		case strings.Contains(l, `"tool/call"`):
			return []string{`{"jsonrpc":"2.0","id":"q-7","method":"ui/ask","params":{"prompt":"Your name?"}}`}
		case strings.Contains(l, `"answer"`):
			answeredID = l
			return []string{`{"jsonrpc":"2.0","id":1,"result":{"output":"hello, Ada"}}`}
		}
		return []string{}
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(answeredID, `"id":"q-7"`) {
		t.Fatalf("the answer went back as %s, want the id q-7", answeredID)
	}
}

// A server that stops early, or says more than was recorded, diverges.
func TestReplayReportsMissingAndExtraLines(t *testing.T) {
	err := replay(t, askDialogue, rawServer(func(l string) []string { return nil }))
	var d *record.Divergence
	if !errors.As(err, &d) || d.Line != 4 || !strings.Contains(d.Reason, "output ended") || d.Got != "" {
		t.Fatalf("a server that exits at once: %v, want a divergence at line 4", err)
	}

	err = replay(t, askDialogue, rawServer(func(l string) []string {
		switch {
		case strings.Contains(l, `"tool/call"`):
			return []string{`{"jsonrpc":"2.0","id":1,"method":"ui/ask","params":{"prompt":"Your name?"}}`}
		case strings.Contains(l, `"answer"`):
			return []string{`{"jsonrpc":"2.0","id":1,"result":{"output":"hello, Ada"}}`, `{"jsonrpc":"2.0","method":"log","params":{"message":"bye"}}`}
		}
		return []string{}
	}))
	if !errors.As(err, &d) || d.Line != 0 || !strings.Contains(d.Got, `"bye"`) {
		t.Fatalf("a server with an extra line: %v, want a divergence after the last line", err)
	}
	if msg := fmt.Sprint(err); !strings.Contains(msg, "after its last line") || !strings.Contains(msg, "(nothing more)") {
		t.Fatalf("message: %s", msg)
	}
}
