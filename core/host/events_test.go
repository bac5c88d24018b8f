package host

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"yolop.dev/core/transporttest"
	"yolop.dev/core/yep"
)

// eventLog collects a subscription's events.
type eventLog struct {
	mu  sync.Mutex
	evs []Event
}

func (l *eventLog) add(ev Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.evs = append(l.evs, ev)
}

func (l *eventLog) all(t *testing.T, s *Session) []Event {
	t.Helper()
	if err := s.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.evs)
}

func types(evs []Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Type)
	}
	return out
}

// One subscription sees a real session's whole life as typed events, in
// order: the start, an extension's handshake, a tool call with its hook,
// its streamed updates and its completion, a status, a crash and the
// respawn, and the end.
func TestSubscribeSeesTheSessionAsTypedEvents(t *testing.T) {
	g := pyGrant(t, "py", map[string]any{"capabilities": []string{"tools", "hooks", "status"}}, "stream", "status", "crash")
	g.Status = true
	g.Hooks = []HookGrant{{Event: yep.HookPreToolUse, Matcher: "stream"}}
	s := newTestSession(t, SessionOptions{Grants: []Grant{g}, SessionID: "s-1"})
	var l eventLog
	s.Subscribe(l.add)
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	s.BeginTurn(ctx)
	var updates int
	res, err := s.CallTool(ctx, "stream", "c1", json.RawMessage(`{"n":2}`), func(yep.ToolUpdateParams) { updates++ })
	if err != nil || res.Output != "streamed" || updates != 2 {
		t.Fatalf("stream = %+v, %v, %d updates to the caller", res, err, updates)
	}
	if _, err := s.CallTool(ctx, "status", "c2", json.RawMessage(`{"text":"indexing"}`), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CallTool(ctx, "crash", "c3", nil, nil); err == nil {
		t.Fatal("crash: no error")
	}
	s.EndTurn()
	// The next call respawns the crashed server.
	if _, err := s.CallTool(ctx, "status", "c4", json.RawMessage(`{"text":"back"}`), nil); err != nil {
		t.Fatal(err)
	}
	s.Close()

	l.mu.Lock()
	evs := slices.Clone(l.evs) // Close delivered everything
	l.mu.Unlock()
	// The eager server's respawn runs beside the next call: its event
	// comes after the crash, wherever the call has got to.
	restarted := slices.IndexFunc(evs, func(ev Event) bool { return ev.Type == yep.EventExtensionRestarted })
	if restarted < 14 {
		t.Fatalf("extension.restarted at %d, want after the crashed call's turn: %v", restarted, types(evs))
	}
	respawn := evs[restarted]
	evs = slices.Delete(evs, restarted, restarted+1)
	got := strings.Join(types(evs), " ")
	want := "extension.started session.started turn.started " +
		"tool.started hook.fired tool.update tool.update tool.completed " +
		"tool.started status.changed tool.completed " +
		"tool.started tool.completed turn.completed " +
		"tool.started status.changed tool.completed session.completed"
	if got != want {
		t.Fatalf("events:\n got %s\nwant %s", got, want)
	}
	for _, ev := range evs {
		if ev.SessionID != "s-1" || ev.Time.IsZero() {
			t.Errorf("%s: session %q, time %v", ev.Type, ev.SessionID, ev.Time)
		}
		info, _ := yep.EventFor(ev.Type)
		if ev.Data != nil && reflect.TypeOf(ev.Data) != info.Data {
			t.Errorf("%s: data is %T, want %v", ev.Type, ev.Data, info.Data)
		}
	}
	started := evs[3].Data.(yep.ToolStartedData)
	if started.Tool != "stream" || started.Extension != "py" || started.ToolCallID != "c1" || string(started.Args) != `{"n":2}` {
		t.Errorf("tool.started = %+v", started)
	}
	if h := evs[4].Data.(yep.HookFiredData); h.Event != yep.HookPreToolUse || h.Decision != yep.DecisionAllow || h.Extension != "py" || evs[4].ParentID != evs[3].SpanID {
		t.Errorf("hook.fired = %+v (parent %s, tool span %s)", h, evs[4].ParentID, evs[3].SpanID)
	}
	if u := evs[5].Data.(yep.ToolUpdateData); u.Output != "chunk 0\n" || u.ToolCallID != "c1" || evs[5].SpanID != evs[3].SpanID {
		t.Errorf("tool.update = %+v", u)
	}
	if d, ok := evs[13].Data.(yep.PhaseData); !ok || d.DurationMS <= 0 {
		t.Errorf("turn.completed data = %#v, want its duration", evs[13].Data)
	}
	if c := evs[7].Data.(yep.ToolCompletedData); c.Status != yep.ToolOK || c.IsError || c.DurationMS <= 0 || evs[7].SpanID != evs[3].SpanID {
		t.Errorf("tool.completed = %+v", c)
	}
	if st := evs[9].Data.(yep.StatusChangedData); st != (yep.StatusChangedData{Extension: "py", Text: "indexing"}) {
		t.Errorf("status.changed = %+v", st)
	}
	if c := evs[12].Data.(yep.ToolCompletedData); c.Status != yep.ToolFailed || !c.IsError || c.Error == "" {
		t.Errorf("crashed call's tool.completed = %+v", c)
	}
	if a, b := evs[0].Data.(yep.ExtensionData), respawn.Data.(yep.ExtensionData); a.Extension != "py" || a.PID == 0 || b.PID == 0 || b.PID == a.PID {
		t.Errorf("extension.started %+v, extension.restarted %+v: want two different pids", a, b)
	}
}

// A subscriber that never returns does not hold up the session: past its
// backlog events are dropped and counted, and the other subscribers get
// every one.
func TestASlowSubscriberNeverBlocksTheSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemSession(t, SessionOptions{}, nil)
		release := make(chan struct{})
		var slow int
		stuck := s.Subscribe(func(Event) { <-release; slow++ })
		var l eventLog
		s.Subscribe(l.add)
		emit := func(i int) {
			s.Emit(Event{Type: yep.TraceLLMGeneration, Data: yep.LLMGenerationData{InputTokens: int64(i)}})
		}
		emit(0)
		synctest.Wait() // the slow subscriber holds the first event
		n := 1 + maxQueuedEvents + 100
		for i := 1; i < n; i++ {
			emit(i)
		}
		synctest.Wait() // every subscriber has done what it can
		l.mu.Lock()
		got := len(l.evs)
		l.mu.Unlock()
		if got != n {
			t.Fatalf("the other subscriber got %d events, want %d", got, n)
		}
		// One event is in the slow callback and its backlog is full: the
		// rest were dropped.
		if d := s.EventsDropped(); d != 100 {
			t.Fatalf("dropped = %d, want 100", d)
		}
		close(release)
		stuck() // delivers what was queued
		if slow != n-100 {
			t.Fatalf("the slow subscriber got %d events, want %d", slow, n-100)
		}
		s.Close()
	})
}

// A crash the host gives up on is an extension.degraded event saying why.
func TestDegradedExtensionIsAnEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A hook subscription makes it eager: it starts with the session.
		g := Grant{Name: "bad", ProtocolVersion: "1.0", Hooks: []HookGrant{{Event: yep.HookPreToolUse, Matcher: "*"}}}
		s := newMemSession(t, SessionOptions{Grants: []Grant{g}}, map[string]transporttest.Server{
			"bad": func(context.Context, io.Reader, io.Writer) error { return errors.New("no handshake") },
		})
		var l eventLog
		s.Subscribe(l.add)
		_ = s.Start(context.Background())
		evs := l.all(t, s)
		if len(evs) == 0 || evs[0].Type != yep.EventExtensionDegraded {
			t.Fatalf("events = %v, want extension.degraded first", types(evs))
		}
		if d := evs[0].Data.(yep.ExtensionData); d.Extension != "bad" || d.Error == "" {
			t.Fatalf("extension.degraded = %+v", d)
		}
		s.Close()
	})
}

// An event survives the trip through trace/event's params: what an
// extension or a --json reader gets decodes to the same typed event.
func TestEventParamsRoundTrip(t *testing.T) {
	for _, info := range yep.Events {
		ev := Event{Type: info.Type, SessionID: "s", TurnID: "2", TraceID: NewTraceID(), SpanID: NewSpanID()}
		if info.Data != nil {
			v := reflect.New(info.Data).Elem()
			fill(v, 1)
			ev.Data = v.Interface()
		}
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		var p yep.TraceEventParams
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		back, err := EventFromParams(p)
		if err != nil {
			t.Fatalf("%s: %v", info.Type, err)
		}
		if info.Data != nil && string(back.raw) != string(p.Data) {
			t.Errorf("%s: the data as it came is not kept: %s", info.Type, back.raw)
		}
		back.raw = nil
		if !reflect.DeepEqual(back, ev) {
			t.Errorf("%s: round trip\n got %+v\nwant %+v", info.Type, back, ev)
		}
	}
	// Data given as JSON goes to trace consumers as it came, members this
	// version does not know included.
	in := yep.TraceEventParams{Type: yep.TraceLLMGeneration, Data: json.RawMessage(`{"model":"m","temperature":0.2}`)}
	typed, err := EventFromParams(in)
	if err != nil || typed.Data.(yep.LLMGenerationData).Model != "m" || string(typed.Params().Data) != string(in.Data) {
		t.Fatalf("llm.generation = %+v, %v; forwarded %s", typed, err, typed.Params().Data)
	}
	// A type this version does not define keeps its data as it came.
	ev, err := EventFromParams(yep.TraceEventParams{Type: "x.custom", Data: json.RawMessage(`{"k":1}`)})
	if err != nil || string(ev.Data.(json.RawMessage)) != `{"k":1}` {
		t.Fatalf("custom event = %+v, %v", ev, err)
	}
}

// fill sets every field of v to a non-zero value derived from n.
func fill(v reflect.Value, n int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("s" + strings.Repeat("x", n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(n + 1))
	case reflect.Float64:
		v.SetFloat(float64(n) + 0.5)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), n+i)
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), n)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 { // json.RawMessage
			v.SetBytes([]byte(`{"a":1}`))
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), n)
	}
}

// Each warning is a warning event once: at the start, and not again when
// a turn boundary rebuilds the registry with the same collision.
func TestWarningsAreEventsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newMemSession(t, SessionOptions{Contributed: []ContributedTools{&fakeContributed{}}}, nil)
		var l eventLog
		s.Subscribe(l.add)
		ctx := context.Background()
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		s.BeginTurn(ctx)
		s.EndTurn()
		s.BeginTurn(ctx)
		s.EndTurn()
		var warnings []string
		for _, ev := range l.all(t, s) {
			if d, ok := ev.Data.(yep.WarningData); ok {
				warnings = append(warnings, d.Message)
			}
		}
		if want := s.Warnings(); len(want) == 0 || !slices.Equal(warnings, want) {
			t.Fatalf("warning events %q, want each of %q once", warnings, want)
		}
		s.Close()
	})
}
