// Package jsonrpc is a bidirectional, multiplexed JSON-RPC 2.0 connection
// over a framed message stream.
//
// A [Conn] is symmetric: either side may call, notify and serve. Messages
// are classified by their fields (a message bearing "method" is a request,
// or a notification when it has no id; only a method-less message is a
// response), each direction has its own id space, and many requests may be
// in flight at once, answered in any order.
//
// Two framers are provided: [NDJSON] (one JSON object per line, as YEP
// speaks) and [ContentLength] (LSP-style headers).
//
// Cancellation follows YEP by default: cancelling the context of [Conn.Call]
// sends a "cancel" request naming the call's id and resolves the call at
// once with [yep.ErrCancelled]; an incoming "cancel" cancels the handler's
// context and its request is answered with the cancelled error. With
// [Options.CancelNotification] the LSP dialect ("$/cancelRequest" as a
// notification) is spoken instead.
//
// Notifications that carry a "request_id" member equal to the id of one of
// this side's pending calls are delivered to that call's
// [CallOptions.OnNotify] in arrival order, ahead of the call's response;
// this is how YEP's tool/update streams reach their caller.
//
// A line the connection must reject (not JSON, or not a valid message) is
// skipped and logged under a rate limit. When it was meant as a response —
// it has no method — and names one of this side's pending calls, that call
// fails at once with an [InvalidResponseError]. Such lines, oversized
// messages and the messages a handler refuses with [Conn.ReportViolation]
// are protocol violations: [Options.MaxViolations] of them within
// [Options.ViolationWindow] end the connection with a [ProtocolError].
//
// # Who reads
//
// Exactly one goroutine reads at a time, in the same way whatever the
// stream: a caller always waits for its answer, which the reader hands
// it. On the serving side the reader runs a short request itself, so a
// request is usually handled by the goroutine that read it; the reading
// role passes to a waiting worker (or a new goroutine) at once when more
// input is already buffered, or once the request has run 500 µs, so
// reading, and with it a cancel for the request, never waits longer.
// Workers are reused; at most [Options.MaxConcurrentHandlers] wait idle.
// Every change to the connection's shared state goes through one
// function under one lock (see state.go).
//
// # Encoding
//
// Messages are encoded and decoded with encoding/json, matching keys
// case-sensitively: a result member spelled "OUTPUT" does not fill a field
// named "output", so a message has the meaning a case-sensitive peer
// gives it.
package jsonrpc
