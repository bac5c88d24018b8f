package host

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"yolop.dev/core/yep"
)

// An Event is one thing that happened in a session: the one stream a
// front-end, a recorder or an exporter reads (see [Session.Subscribe]).
// Its fields are those of a trace/event; Data is typed by Type, as
// [yep.Events] lists: a value such as [yep.ToolCompletedData], nil for an
// event with no data, or a json.RawMessage for a type this version does
// not define.
type Event struct {
	Type      string
	SessionID string
	TurnID    string
	TraceID   string
	SpanID    string
	ParentID  string
	Time      time.Time
	Data      any

	raw json.RawMessage // the data as it came, carried verbatim by Params
}

// Params returns the event as a trace/event's params, its data encoded;
// data that came as JSON (an event given to [Session.Trace], or made by
// [EventFromParams]) is carried verbatim, members this version does not
// know included.
func (ev Event) Params() yep.TraceEventParams {
	p := yep.TraceEventParams{Type: ev.Type, SessionID: ev.SessionID, TurnID: ev.TurnID, TraceID: ev.TraceID, SpanID: ev.SpanID, ParentID: ev.ParentID}
	if !ev.Time.IsZero() {
		p.Timestamp = ev.Time.UTC().Format(time.RFC3339Nano)
	}
	switch d := ev.Data.(type) {
	case nil:
	case json.RawMessage:
		p.Data = d
	default:
		if ev.raw != nil {
			p.Data = ev.raw
			break
		}
		p.Data = mustJSON(d)
	}
	return p
}

// MarshalJSON encodes the event as a trace/event's params: one line of
// `yolop session --json`.
func (ev Event) MarshalJSON() ([]byte, error) { return json.Marshal(ev.Params()) }

// EventFromParams is the event a trace/event's params describe, its data
// decoded into its type's payload.
func EventFromParams(p yep.TraceEventParams) (Event, error) {
	ev := Event{Type: p.Type, SessionID: p.SessionID, TurnID: p.TurnID, TraceID: p.TraceID, SpanID: p.SpanID, ParentID: p.ParentID}
	if p.Timestamp != "" {
		t, err := time.Parse(time.RFC3339Nano, p.Timestamp)
		if err != nil {
			return ev, fmt.Errorf("event %s: timestamp: %w", p.Type, err)
		}
		ev.Time = t
	}
	d, err := yep.DecodeEventData(p.Type, p.Data)
	if err != nil {
		return ev, fmt.Errorf("event %s: data: %w", p.Type, err)
	}
	ev.Data = d
	if _, typed := d.(json.RawMessage); !typed && d != nil {
		ev.raw = p.Data
	}
	return ev, nil
}

// maxQueuedEvents bounds one subscriber's backlog; past it events are
// dropped and counted, so a slow subscriber never slows the session.
const maxQueuedEvents = 4096

// A subscriber receives the session's events in order on a goroutine of
// its own.
type subscriber struct {
	fn   func(Event)
	wake chan struct{} // one slot
	done chan struct{} // closed when the goroutine has returned

	mu        sync.Mutex
	cond      *sync.Cond // signalled as delivered grows
	events    []Event
	queued    int64 // events accepted so far
	delivered int64 // events handed to fn so far
	stopped   bool
}

func (sub *subscriber) add(ev Event) bool {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if sub.stopped || len(sub.events) >= maxQueuedEvents {
		return false
	}
	sub.events = append(sub.events, ev)
	sub.queued++
	select {
	case sub.wake <- struct{}{}:
	default:
	}
	return true
}

func (sub *subscriber) run() {
	defer close(sub.done)
	var spare []Event
	for {
		<-sub.wake
		sub.mu.Lock()
		evs, stopped := sub.events, sub.stopped
		sub.events = spare[:0]
		sub.mu.Unlock()
		for _, ev := range evs {
			sub.fn(ev)
		}
		clear(evs)
		spare = evs
		sub.mu.Lock()
		sub.delivered += int64(len(evs))
		sub.cond.Broadcast()
		sub.mu.Unlock()
		if stopped {
			return
		}
	}
}

// stop delivers what is queued, then ends the goroutine and waits for it.
func (sub *subscriber) stop() {
	sub.mu.Lock()
	sub.stopped = true
	sub.cond.Broadcast()
	sub.mu.Unlock()
	select {
	case sub.wake <- struct{}{}:
	default:
	}
	<-sub.done
}

// flushed waits until every event queued before the call is delivered.
func (sub *subscriber) flushed(ctx context.Context) error {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	want := sub.queued
	stop := context.AfterFunc(ctx, func() {
		sub.mu.Lock()
		sub.cond.Broadcast()
		sub.mu.Unlock()
	})
	defer stop()
	for sub.delivered < want && !sub.stopped {
		if err := ctx.Err(); err != nil {
			return err
		}
		sub.cond.Wait()
	}
	return nil
}

// Subscribe delivers every later event of the session to fn, in order,
// on a goroutine of its own: fn never runs on the session's path and may
// take its time. The session never waits for it either: past
// a backlog of 4096 events, events are dropped and counted (see
// [Session.EventsDropped]). Subscribe before [Session.Start] to see the
// start's events. cancel stops delivery after the events already queued
// and returns once fn has returned for the last time; do not call it
// from fn. [Session.Close] delivers what is queued and ends every
// subscription.
func (s *Session) Subscribe(fn func(Event)) (cancel func()) {
	sub := &subscriber{fn: fn, wake: make(chan struct{}, 1), done: make(chan struct{})}
	sub.cond = sync.NewCond(&sub.mu)
	s.subMu.Lock()
	if s.subsClosed {
		s.subMu.Unlock()
		return func() {}
	}
	s.subs = append(s.subs, sub)
	s.subMu.Unlock()
	go sub.run()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.subMu.Lock()
			for i, x := range s.subs {
				if x == sub {
					s.subs = append(s.subs[:i:i], s.subs[i+1:]...)
				}
			}
			s.subMu.Unlock()
			sub.stop()
		})
	}
}

// Flush returns once every subscriber has been handed every event the
// session emitted before the call, or when ctx ends. A front-end that
// prints a tool's streamed output from tool.update events flushes before
// it prints the call's result.
func (s *Session) Flush(ctx context.Context) error {
	s.subMu.Lock()
	subs := s.subs
	s.subMu.Unlock()
	for _, sub := range subs {
		if err := sub.flushed(ctx); err != nil {
			return err
		}
	}
	return nil
}

// EventsDropped counts the events subscribers did not get because their
// backlog was full.
func (s *Session) EventsDropped() int64 { return s.dropped.Load() }

// hasSubscribers reports whether a subscriber reads the session's events.
func (s *Session) hasSubscribers() bool {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	return len(s.subs) > 0
}

// closeSubscriptions delivers what is queued and ends every subscription.
func (s *Session) closeSubscriptions() {
	s.subMu.Lock()
	subs := s.subs
	s.subs, s.subsClosed = nil, true
	s.subMu.Unlock()
	for _, sub := range subs {
		sub.stop()
	}
}

// Emit reports one event: to every subscriber and, for a type trace
// consumers get (every type but the session-local ones, such as
// tool.update, that [yep.Events] marks), to every trace-declaring
// extension as trace/event. It never blocks.
//
// It fills in what the event leaves empty: the session id, the time, and,
// while a turn is in progress, for an event that names no trace (one an
// agent loop above the host emits, such as reason.started or
// llm.generation): the turn's id, its trace id and, as parent, the turn's
// span.
func (s *Session) Emit(ev Event) {
	if ev.SessionID == "" {
		ev.SessionID = s.opts.SessionID
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	s.mu.Lock()
	if ev.TraceID == "" && s.span.traceID != "" && !strings.HasPrefix(ev.Type, "session.") && !strings.HasPrefix(ev.Type, "extension.") {
		ev.TraceID = s.span.traceID
		if ev.TurnID == "" {
			ev.TurnID = fmt.Sprint(s.turn)
		}
		if ev.ParentID == "" && ev.SpanID != s.span.spanID {
			ev.ParentID = s.span.spanID
		}
	}
	exts := s.extensions()
	s.mu.Unlock()
	if info, known := yep.EventFor(ev.Type); !known || info.Forward {
		var p yep.TraceEventParams
		encoded := false
		for _, e := range exts {
			if !e.grant.Trace {
				continue
			}
			if !encoded {
				p, encoded = ev.Params(), true
			}
			e.Trace(p)
		}
	}
	s.subMu.Lock()
	subs := s.subs
	s.subMu.Unlock()
	for _, sub := range subs {
		if !sub.add(ev) {
			s.dropped.Add(1)
		}
	}
}

// Trace emits an event given as a trace/event's params, its data decoded
// into its type's payload (see [Session.Emit]); data that does not decode
// is carried as it is. High-frequency streaming deltas must not be passed
// here.
func (s *Session) Trace(p yep.TraceEventParams) {
	ev, err := EventFromParams(p)
	if err != nil {
		s.log.Debug("trace event carried as it is", "type", p.Type, "error", err)
		ev.Data = p.Data
	}
	s.Emit(ev)
}

// noteWarnings emits a warning event for each warning not reported yet.
func (s *Session) noteWarnings() {
	ws := s.Warnings()
	s.mu.Lock()
	var fresh []string
	for _, w := range ws {
		if !s.warned[w] {
			if s.warned == nil {
				s.warned = map[string]bool{}
			}
			s.warned[w] = true
			fresh = append(fresh, w)
		}
	}
	s.mu.Unlock()
	for _, w := range fresh {
		s.Emit(Event{Type: yep.EventWarning, Data: yep.WarningData{Message: w}})
	}
}

// statusEvents turns an extension's status/changed into status.changed
// events.
type statusEvents struct{ s *Session }

func (st statusEvents) SetStatus(ext, text string) {
	st.s.Emit(Event{Type: yep.EventStatusChanged, Data: yep.StatusChangedData{Extension: ext, Text: text}})
}
