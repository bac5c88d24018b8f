package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/mcp/internal/testpkg"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// gatedWriter holds back the first progress notification the client reads
// until gate closes: the client reads nothing more meanwhile, so the
// gateway's next write waits, and the gateway falls behind the session.
type gatedWriter struct {
	gate <-chan struct{}
	w    *syncBuffer
}

func (g gatedWriter) Write(p []byte) (int, error) {
	if bytes.HasPrefix(p, []byte("read: ")) && bytes.Contains(p, []byte(`"notifications/progress"`)) {
		<-g.gate
	}
	return g.w.Write(p)
}

// wireMessage is one message the client read, as the go-sdk's
// LoggingTransport logged it.
type wireMessage struct {
	Method string `json:"method"`
	Params struct {
		ProgressToken any     `json:"progressToken"`
		Progress      float64 `json:"progress"`
		Message       string  `json:"message"`
	} `json:"params"`
	Result *struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
}

// readMessages parses the messages a LoggingTransport logged as read, in
// the order the client read them.
func readMessages(t *testing.T, log string) []wireMessage {
	t.Helper()
	var msgs []wireMessage
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "read: ")
		if !ok {
			continue
		}
		var m wireMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("a message the client read: %v: %s", err, line)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// TestGatewayProgressOrder: a streaming tool's updates reach the official
// MCP client as progress notifications for the call's token, every one of
// them, in order, before the call's result on the wire and none after it,
// even when the client reads the first notification only once the call
// has completed in the session, so the gateway is behind the session's
// stream when the result is ready.
func TestGatewayProgressOrder(t *testing.T) {
	const n = 50
	log := &syncBuffer{}
	gate := make(chan struct{})
	cs, s := serveSession(t, nil, func(ct sdk.Transport) sdk.Transport {
		return &sdk.LoggingTransport{Transport: ct, Writer: gatedWriter{gate, log}}
	}, testpkg.Echo(t))
	var once sync.Once
	stop := s.Subscribe(func(ev host.Event) {
		if ev.Type == yep.TraceToolCompleted {
			once.Do(func() { close(gate) })
		}
	})
	defer stop()
	ctx := context.Background()
	p := &sdk.CallToolParams{Name: "count", Arguments: map[string]any{"n": n, "delay_ms": 0}}
	p.SetProgressToken("order")
	res, err := cs.CallTool(ctx, p)
	if err != nil || text(res) != fmt.Sprintf("counted to %d", n) {
		t.Fatalf("count = %+v, %v", res, err)
	}
	// Every event the session emitted so far has been handled by the
	// gateway; the ping's answer follows on the wire whatever the gateway
	// sent for them, so the log holds any progress sent late.
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}

	var progress []wireMessage
	resultAt, afterResult := -1, 0
	for i, m := range readMessages(t, log.String()) {
		switch {
		case m.Method == "notifications/progress" && m.Params.ProgressToken == "order":
			progress = append(progress, m)
			if resultAt >= 0 {
				afterResult++
			}
		case m.Result != nil && len(m.Result.Content) == 1 && m.Result.Content[0].Text == fmt.Sprintf("counted to %d", n):
			resultAt = i
		}
	}
	if resultAt < 0 {
		t.Fatalf("the call's result is not in the client's log:\n%s", log.String())
	}
	if afterResult > 0 {
		t.Errorf("%d progress notifications arrived after the call's result", afterResult)
	}
	if len(progress) != n {
		t.Fatalf("%d progress notifications, want %d (one per update):\n%s", len(progress), n, log.String())
	}
	for i, m := range progress {
		if m.Params.Progress != float64(i+1) || m.Params.Message != fmt.Sprint(i+1) {
			t.Fatalf("progress notification %d = %+v, want progress %d with message %q", i, m.Params, i+1, fmt.Sprint(i+1))
		}
	}
}

// TestGatewayProgressFromStream: the gateway's progress is the session's
// event stream: a tool.update event emitted into the session for a running
// call reaches the call's client as progress, its progress and total
// carried, and one for another call id does not.
func TestGatewayProgressFromStream(t *testing.T) {
	var mu sync.Mutex
	var got []*sdk.ProgressNotificationParams
	fromStream := make(chan struct{})
	cs, s := serveSession(t, &sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r.Params)
		if r.Params.Message == "from the stream" {
			close(fromStream)
		}
	}}, nil, testpkg.Echo(t))
	started := make(chan string, 1)
	stop := s.Subscribe(func(ev host.Event) {
		if d, ok := ev.Data.(yep.ToolStartedData); ok && ev.Type == yep.TraceToolStarted {
			select {
			case started <- d.ToolCallID:
			default:
			}
		}
	})
	defer stop()

	ctx, cancel := context.WithCancel(context.Background())
	p := &sdk.CallToolParams{Name: "count", Arguments: map[string]any{"n": 100000, "delay_ms": 5}}
	p.SetProgressToken("long")
	done := make(chan error, 1)
	go func() { _, err := cs.CallTool(ctx, p); done <- err }()
	id := <-started
	s.Emit(host.Event{Type: yep.EventToolUpdate, Data: yep.ToolUpdateData{Tool: "count", ToolCallID: "not-" + id, Output: "stray"}})
	s.Emit(host.Event{Type: yep.EventToolUpdate, Data: yep.ToolUpdateData{Tool: "count", ToolCallID: id,
		Progress: &yep.Progress{Current: 1e9, Total: 2e9, Message: "from the stream"}}})
	// The client handles notifications in the order they came, so the
	// stray one, had it been sent, is in got already.
	<-fromStream
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled count = %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range got {
		if p.ProgressToken != "long" {
			t.Errorf("progress for token %v, want only %q", p.ProgressToken, "long")
		}
		if p.Message == "stray" {
			t.Errorf("a tool.update of another call id reached the client: %+v", p)
		}
		if p.Message == "from the stream" && (p.Progress != 1e9 || p.Total != 2e9) {
			t.Errorf("progress from the stream = %+v, want progress 1e9 of 2e9", p)
		}
	}
}
