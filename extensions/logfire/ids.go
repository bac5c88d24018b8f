package logfire

import (
	"context"
	"crypto/rand"
	"crypto/sha256"

	"go.opentelemetry.io/otel/trace"
)

// The OTel SDK makes its own span ids; the extension must export the
// host's. The TracerProvider runs with eventIDs as its IDGenerator, which
// returns the ids put in the context passed to Tracer.Start by withIDs,
// and random ones otherwise.

type idsKey struct{}

type spanIDs struct {
	trace trace.TraceID
	span  trace.SpanID
}

// withIDs makes the next span started with ctx take these ids (the trace
// id only matters for a span without a parent).
func withIDs(ctx context.Context, tid trace.TraceID, sid trace.SpanID) context.Context {
	return context.WithValue(ctx, idsKey{}, spanIDs{tid, sid})
}

// eventIDs is an [sdktrace.IDGenerator] that hands out the ids of the
// event being folded.
type eventIDs struct{}

func (eventIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if v, ok := ctx.Value(idsKey{}).(spanIDs); ok && v.trace.IsValid() && v.span.IsValid() {
		return v.trace, v.span
	}
	return randomTraceID(), randomSpanID()
}

func (eventIDs) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	if v, ok := ctx.Value(idsKey{}).(spanIDs); ok && v.span.IsValid() {
		return v.span
	}
	return randomSpanID()
}

func randomTraceID() trace.TraceID {
	var t trace.TraceID
	for !t.IsValid() {
		rand.Read(t[:])
	}
	return t
}

func randomSpanID() trace.SpanID {
	var s trace.SpanID
	for !s.IsValid() {
		rand.Read(s[:])
	}
	return s
}

// parseSpanID reads a W3C span id (16 lowercase hex digits, not all zero).
func parseSpanID(s string) (trace.SpanID, bool) {
	if len(s) != 16 {
		return trace.SpanID{}, false
	}
	id, err := trace.SpanIDFromHex(s)
	return id, err == nil
}

// parseTraceID reads a W3C trace id (32 lowercase hex digits, not all
// zero).
func parseTraceID(s string) (trace.TraceID, bool) {
	if len(s) != 32 {
		return trace.TraceID{}, false
	}
	id, err := trace.TraceIDFromHex(s)
	return id, err == nil
}

// derivedSpanID maps an id that is no W3C span id (an older host's, or an
// agent loop's own) to one, the same every time within a session, so
// parent references to it still resolve.
func derivedSpanID(session, id string) trace.SpanID {
	var s trace.SpanID
	sum := sha256.Sum256([]byte("span\x00" + session + "\x00" + id))
	copy(s[:], sum[:])
	if !s.IsValid() {
		s[7] = 1
	}
	return s
}

// derivedTraceID is the trace of a turn whose events carry no trace id.
func derivedTraceID(session, turn string) trace.TraceID {
	var t trace.TraceID
	sum := sha256.Sum256([]byte("trace\x00" + session + "\x00" + turn))
	copy(t[:], sum[:])
	if !t.IsValid() {
		t[15] = 1
	}
	return t
}
