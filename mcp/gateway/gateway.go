// Package gateway serves a session's YEP extension tools to any MCP client
// (Claude Code, goose, an IDE) with the official go-sdk server, over stdio
// or streamable HTTP: `yolop mcp serve`.
//
// tools/list is the session's extension tools — the clamped grants, with
// their manifest schemas and descriptions; tools/call runs
// [host.Session.CallTool], so hooks fire (a pre_tool_use block is an MCP
// tool error), and MCP cancellation cancels the call's context, which
// sends YEP cancel. Progress comes from the session's event stream: the
// gateway subscribes once, and each tool.update event of a call whose
// client sent a progress token becomes an MCP progress notification on
// that request; the stream is flushed before the call's result is sent,
// so every notification precedes the result and none follows it. A
// ui/ask from an extension becomes MCP form elicitation when the client
// supports it, else it is answered cancelled. So does the approval
// question of a call that needs one (the tool's manifest says approval
// "always", or the user's [approval] policy asks): it goes to the client
// that made the call, whose answer "allow" runs it; a decline, any other
// answer, or a client without elicitation denies it, as an error result,
// and the server never gets the call. Prompt contributions are not
// served: a YEP prompt is system-prompt context the host adds every turn,
// while an MCP prompt is a template the user picks, so they do not map.
//
// Over stdio a malformed line from the client is answered with a JSON-RPC
// error and skipped, never the end of the session; over HTTP a request
// from a non-loopback Origin is refused.
package gateway

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
)

// Options configure a [Gateway].
type Options struct {
	// Name and Version identify the server to clients. Empty means
	// "yolop" and "dev".
	Name, Version string
	// Logger is the host logger. Nil means no logging.
	Logger hclog.Logger
}

// A Gateway serves one session's extension tools as an MCP server. It is
// also the session's [host.AskSink]: pass it as the session's Ask before
// [Gateway.Attach].
type Gateway struct {
	o   Options
	log hclog.Logger
	srv *sdk.Server

	mu     sync.Mutex
	sess   *host.Session
	unsubs []func()
	active []*pendingCall
	parked map[string]*parked
	routes map[string]*progressRoute // by tool call id
	calls  atomic.Int64
}

// A progressRoute takes one call's tool.update events to the MCP request
// that is waiting on the call, as progress notifications for its token.
type progressRoute struct {
	log  hclog.Logger
	tool string

	mu     sync.Mutex // held while a notification is sent
	ss     *sdk.ServerSession
	token  any
	n      float64 // updates without progress of their own, so far
	closed bool
}

// notify sends u as a progress notification, unless the route is closed.
func (r *progressRoute) notify(u yep.ToolUpdateData) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	p := &sdk.ProgressNotificationParams{ProgressToken: r.token, Message: u.Output}
	if u.Progress != nil {
		p.Progress, p.Total = u.Progress.Current, u.Progress.Total
		if u.Progress.Message != "" {
			p.Message = u.Progress.Message
		}
	} else {
		r.n++ // progress must increase: count the updates
		p.Progress = r.n
	}
	if err := r.ss.NotifyProgress(context.Background(), p); err != nil {
		r.log.Debug("progress not delivered", "tool", r.tool, "error", err)
	}
}

// close stops the route; it returns once a notification being sent is
// sent.
func (r *progressRoute) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
}

// New returns a gateway with no tools until Attach.
func New(o Options) *Gateway {
	if o.Name == "" {
		o.Name = "yolop"
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	log := o.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	g := &Gateway{o: o, log: log.Named("mcp-gateway"), parked: map[string]*parked{}, routes: map[string]*progressRoute{}}
	g.srv = sdk.NewServer(&sdk.Implementation{Name: o.Name, Version: o.Version}, &sdk.ServerOptions{
		Instructions: "Tools of the yolop extensions enabled on this machine.",
	})
	return g
}

// Server is the go-sdk server, for a caller with its own transport.
func (g *Gateway) Server() *sdk.Server { return g.srv }

// Attach serves s's extension tools: every tool an extension
// ("ext:<name>") serves, deferred or not, by its session name. Built-ins,
// tool_search and MCP tools are not served. It returns a warning for each
// tool that cannot be served (a schema that is not an object). It
// subscribes to s's events for the calls' progress, until [Gateway.Close]
// or the session's close.
func (g *Gateway) Attach(s *host.Session) []string {
	unsub := s.Subscribe(g.event)
	g.mu.Lock()
	g.sess = s
	g.unsubs = append(g.unsubs, unsub)
	g.mu.Unlock()
	var warns []string
	for _, t := range s.Tools() {
		if !strings.HasPrefix(t.Capability, "ext:") {
			continue
		}
		schema, err := inputSchema(t.Def.InputSchema)
		if err != nil {
			warns = append(warns, fmt.Sprintf("tool %s of %s is not served: %v", t.Name, t.Capability, err))
			continue
		}
		name, ext := t.Name, strings.TrimPrefix(t.Capability, "ext:")
		g.srv.AddTool(&sdk.Tool{Name: name, Description: t.Def.Description, InputSchema: schema}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return g.call(ctx, s, name, ext, req)
		})
	}
	return warns
}

// event routes a tool.update event to its call's request, if it is the
// gateway's call and its request asked for progress.
func (g *Gateway) event(ev host.Event) {
	u, ok := ev.Data.(yep.ToolUpdateData)
	if !ok || ev.Type != yep.EventToolUpdate {
		return
	}
	g.mu.Lock()
	r := g.routes[u.ToolCallID]
	g.mu.Unlock()
	if r != nil {
		r.notify(u)
	}
}

// route sends the progress of call id to req's progress token, if it has
// one, until unroute.
func (g *Gateway) route(id, tool string, req *sdk.CallToolRequest) {
	tok := req.Params.GetProgressToken()
	if tok == nil {
		return
	}
	g.mu.Lock()
	g.routes[id] = &progressRoute{log: g.log, tool: tool, ss: req.Session, token: tok}
	g.mu.Unlock()
}

// unroute delivers the progress of call id the session has emitted so far
// (unless ctx ends first), then stops routing it: after unroute no
// notification for the request's token is sent, so its response can go.
func (g *Gateway) unroute(ctx context.Context, pc *pendingCall) {
	g.mu.Lock()
	r := g.routes[pc.id]
	g.mu.Unlock()
	if r == nil {
		return
	}
	if err := pc.sess.Flush(ctx); err != nil {
		g.log.Debug("progress not flushed", "tool", r.tool, "error", err)
	}
	r.close()
	g.mu.Lock()
	if g.routes[pc.id] == r {
		delete(g.routes, pc.id)
	}
	g.mu.Unlock()
}

// inputSchema is a tool's schema as MCP wants it: an object schema.
func inputSchema(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("input_schema is not a JSON object: %w", err)
	}
	switch m["type"] {
	case "object":
		return raw, nil
	case nil:
		m["type"] = "object"
		return json.Marshal(m)
	}
	return nil, fmt.Errorf("input_schema has type %v; MCP tools take an object", m["type"])
}

// ParkTimeout is how long a call waits for the client to answer an
// elicitation before the question is answered cancelled.
var ParkTimeout = 10 * time.Minute

// A pendingCall is one tools/call running on the session. It outlives the
// MCP request that started it when it is parked on an elicitation.
type pendingCall struct {
	sess   *host.Session
	id     string // the tool call id
	tool   string
	ext    string
	done   chan callDone
	asks   chan askReq
	cancel context.CancelFunc
	ended  chan struct{}
}

// callKey holds a call's *pendingCall in the context the call runs with,
// so a question asked in the call reaches the call's own client.
type callKey struct{}

type callDone struct {
	res yep.ToolResult
	err error
}

type askReq struct {
	p      yep.UIAskParams
	answer chan yep.UIAskResult
}

// parked is a call waiting for the client's answer to an input request.
type parked struct {
	call  *pendingCall
	ask   askReq
	timer *time.Timer
}

func (g *Gateway) call(ctx context.Context, s *host.Session, name, ext string, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	if st := req.Params.RequestState; st != "" {
		// The client's retry with the answer to an elicitation.
		g.mu.Lock()
		pk := g.parked[st]
		delete(g.parked, st)
		g.mu.Unlock()
		if pk == nil {
			return nil, fmt.Errorf("unknown or expired requestState %q", st)
		}
		pk.timer.Stop()
		// The call's progress now goes to the retry's token.
		g.route(pk.call.id, pk.call.tool, req)
		pk.ask.answer <- answerOf(req.Params.InputResponses["ask"])
		return g.wait(ctx, req, pk.call)
	}
	id := fmt.Sprintf("mcp-%d", g.calls.Add(1))
	g.route(id, name, req)
	// The call may outlive this request (parked on an elicitation), so it
	// runs on its own context, cancelled when the request is.
	callCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	pc := &pendingCall{sess: s, id: id, tool: name, ext: ext, done: make(chan callDone, 1), asks: make(chan askReq), cancel: cancel, ended: make(chan struct{})}
	callCtx = context.WithValue(callCtx, callKey{}, pc)
	g.mu.Lock()
	g.active = append(g.active, pc)
	g.mu.Unlock()
	go func() {
		// Its tool.update events reach the client through the
		// subscription (see Gateway.event).
		res, err := s.CallTool(callCtx, name, id, req.Params.Arguments, nil)
		pc.done <- callDone{res, err}
	}()
	return g.wait(ctx, req, pc)
}

// wait waits for a call to end, or to ask a question: the question is
// put to the client as an input request (elicitation) and the call parked
// until the client retries with the answer.
func (g *Gateway) wait(ctx context.Context, req *sdk.CallToolRequest, pc *pendingCall) (*sdk.CallToolResult, error) {
	for {
		select {
		case d := <-pc.done:
			g.unroute(ctx, pc)
			g.finish(pc)
			return result(d)
		case a := <-pc.asks:
			if a.p.Secret || !elicits(req.Session) {
				a.answer <- yep.UIAskResult{Cancelled: true}
				continue
			}
			state := fmt.Sprintf("ask-%d", g.calls.Add(1))
			pk := &parked{call: pc, ask: a}
			pk.timer = time.AfterFunc(ParkTimeout, func() {
				g.mu.Lock()
				_, still := g.parked[state]
				delete(g.parked, state)
				g.mu.Unlock()
				if still {
					a.answer <- yep.UIAskResult{Cancelled: true}
					pc.cancel()
					<-pc.done
					g.finish(pc)
				}
			})
			g.mu.Lock()
			g.parked[state] = pk
			g.mu.Unlock()
			// This request ends here: its progress is sent before its
			// result, and the retry's request gets the rest.
			g.unroute(ctx, pc)
			return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"ask": elicitation(pc.ext, a.p)}, RequestState: state}, nil
		case <-ctx.Done():
			pc.cancel()
			<-pc.done
			g.unroute(ctx, pc)
			g.finish(pc)
			return nil, ctx.Err()
		}
	}
}

func (g *Gateway) finish(pc *pendingCall) {
	pc.cancel()
	g.mu.Lock()
	if i := slices.Index(g.active, pc); i >= 0 {
		g.active = slices.Delete(g.active, i, i+1)
		close(pc.ended)
	}
	g.mu.Unlock()
}

func result(d callDone) (*sdk.CallToolResult, error) {
	if d.err != nil {
		if errors.Is(d.err, host.ErrNoSuchTool) {
			return nil, d.err
		}
		// Tool-level: the client's model sees it and can adapt (a hook's
		// block, a timeout, invalid arguments, a crashed server).
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: d.err.Error()}}}, nil
	}
	out := &sdk.CallToolResult{IsError: d.res.IsError, Content: []sdk.Content{&sdk.TextContent{Text: d.res.Output}}}
	if len(d.res.Data) > 0 && json.Valid(d.res.Data) {
		out.StructuredContent = d.res.Data
	}
	return out, nil
}

func elicits(ss *sdk.ServerSession) bool {
	ip := ss.InitializeParams()
	return ip != nil && ip.Capabilities != nil && ip.Capabilities.Elicitation != nil
}

// elicitation is a ui/ask as a one-field form (a selector when it has
// options).
func elicitation(ext string, p yep.UIAskParams) *sdk.ElicitParams {
	field := map[string]any{"type": "string", "title": p.Prompt}
	if p.Placeholder != "" {
		field["description"] = p.Placeholder
	}
	if len(p.Options) > 0 {
		field["enum"] = p.Options
	}
	return &sdk.ElicitParams{
		Mode:            "form",
		Message:         fmt.Sprintf("%s asks: %s", ext, p.Prompt),
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"answer": field}, "required": []string{"answer"}},
	}
}

func answerOf(r sdk.InputResponse) yep.UIAskResult {
	er, ok := r.(*sdk.ElicitResult)
	if !ok || er.Action != "accept" {
		return yep.UIAskResult{Cancelled: true}
	}
	answer, _ := er.Content["answer"].(string)
	return yep.UIAskResult{Answer: answer}
}

// Ask implements [host.AskSink]: the question goes to the MCP client of
// the call it is asked in (a tool call's approval question: ctx is the
// call's), else of the extension's oldest running call, as form
// elicitation, when the client supports it. A secret question, one asked outside a call, or one to a
// client without elicitation is answered cancelled: MCP forms must not
// carry secrets.
func (g *Gateway) Ask(ctx context.Context, ext string, p yep.UIAskParams) (yep.UIAskResult, error) {
	g.mu.Lock()
	pc, _ := ctx.Value(callKey{}).(*pendingCall)
	if !slices.Contains(g.active, pc) {
		pc = nil
		for _, c := range g.active {
			if c.ext == ext {
				pc = c
				break
			}
		}
	}
	g.mu.Unlock()
	if pc == nil {
		return yep.UIAskResult{Cancelled: true}, nil
	}
	a := askReq{p: p, answer: make(chan yep.UIAskResult, 1)}
	select {
	case pc.asks <- a:
	case <-pc.ended:
		return yep.UIAskResult{Cancelled: true}, nil
	case <-ctx.Done():
		return yep.UIAskResult{Cancelled: true}, nil
	}
	select {
	case r := <-a.answer:
		return r, nil
	case <-ctx.Done():
		return yep.UIAskResult{Cancelled: true}, nil
	}
}

var _ host.AskSink = (*Gateway)(nil)

// Close ends every running call: parked questions are answered cancelled
// and the calls' contexts cancelled; no more progress is sent, and the
// gateway's subscriptions to its sessions' events end. Call it when the
// transport is done.
func (g *Gateway) Close() {
	g.mu.Lock()
	waiting := g.parked
	g.parked = map[string]*parked{}
	active := slices.Clone(g.active)
	routes := g.routes
	g.routes = map[string]*progressRoute{}
	unsubs := g.unsubs
	g.unsubs = nil
	g.mu.Unlock()
	for _, r := range routes {
		r.close()
	}
	for _, unsub := range unsubs {
		unsub()
	}
	for _, pk := range waiting {
		if pk.timer.Stop() {
			pk.ask.answer <- yep.UIAskResult{Cancelled: true}
		}
	}
	for _, pc := range active {
		pc.cancel()
	}
}

// ServeStdio serves one client on the process's stdin and stdout until
// the client disconnects or ctx ends. A line from the client that is not
// a JSON-RPC message is answered with a JSON-RPC error (-32700 when it is
// not JSON, -32600 otherwise) and skipped: the session goes on.
func (g *Gateway) ServeStdio(ctx context.Context) error {
	return g.srv.Run(ctx, stdioTransport(os.Stdin, os.Stdout, g.log))
}

// Serve serves one client over t until it disconnects or ctx ends.
func (g *Gateway) Serve(ctx context.Context, t sdk.Transport) error {
	return g.srv.Run(ctx, t)
}

// HTTPHandler serves streamable HTTP. A request with an Origin header
// that is not loopback (localhost, 127.0.0.0/8, ::1) is refused with 403,
// as the MCP transport asks of servers against DNS rebinding: a web page
// the user visits cannot call the extensions' tools. A request with no
// Origin (a client that is not a browser) is served. A non-empty token is
// required of every request as "Authorization: Bearer <token>".
func (g *Gateway) HTTPHandler(token string) http.Handler {
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return g.srv }, nil)
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !loopbackOrigin(o) {
			g.log.Debug("refused a request from a non-loopback origin", "origin", o)
			http.Error(w, fmt.Sprintf("Origin %q is not a loopback address: yolop mcp serve answers only pages served from this machine (a client that is not a browser sends no Origin)", o), http.StatusForbidden)
			return
		}
		if token != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="yolop"`)
			http.Error(w, "a bearer token is required", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// loopbackOrigin reports whether an Origin header names a loopback host.
func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
