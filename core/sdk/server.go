package sdk

import (
	"context"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/internal/json"
	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/yep"
)

// Info identifies a capability server and names the server-to-host methods
// it opts into (spec D4: the manifest declares them, the handshake repeats
// them). An opt-in only permits the method: it is still sent only when the
// host advertised it too.
type Info struct {
	// Name is the extension name, e.g. "echo". It labels logs and errors.
	Name string
	// Version is the server's own version, e.g. "0.1.0".
	Version string
	// Status opts into status/changed ([Server.Status]); announces "status".
	Status bool
	// UIAsk opts into ui/ask ([Server.Ask]); announces "ui_ask".
	UIAsk bool
	// Log opts into the log notification ([Server.Log] sends to the host
	// instead of stderr when the host advertised "log"); announces "log".
	Log bool
}

// Options tune a [Server]. The zero value is valid.
type Options struct {
	// Logger receives the server's own logs. Nil means an hclog logger
	// named after Info.Name writing to stderr at info level. stdout is
	// never used for logs: it carries only protocol JSON.
	Logger hclog.Logger
}

// A ToolHandler runs one tool call. ctx is cancelled when the host cancels
// the call or the connection ends.
//
// A returned plain error is a tool-level failure the agent should read: it
// becomes a result with is_error set and the error text as output. Return a
// *[yep.Error] to fail the request at the protocol level instead.
type ToolHandler func(ctx context.Context, call *ToolCall) (yep.ToolResult, error)

// A HookHandler decides one hook firing. An empty decision means allow. An
// error fails the firing, and the host applies the subscription's on_error
// policy (warn or block).
type HookHandler func(ctx context.Context, h *HookEvent) (yep.HookFireResult, error)

// HookOptions are the static policy of a hook subscription.
type HookOptions struct {
	// TimeoutMS bounds one firing, enforced by the host; 0 means the host
	// default.
	TimeoutMS int
	// OnError is what a timeout or error means: yep.HookOnErrorWarn (the
	// default when empty) or yep.HookOnErrorBlock.
	OnError string
}

// A PromptFunc computes the dynamic system-prompt contribution of a turn.
type PromptFunc func(ctx context.Context, p yep.PromptContributionParams) (string, error)

// A CommandHandler runs a slash command with its raw argument string.
type CommandHandler func(ctx context.Context, args string) (yep.CommandExecuteResult, error)

type tool struct {
	name      string
	streaming bool
	h         ToolHandler
	// The derived schemas the handshake's ToolDecl carries, if any.
	inputSchema, outputSchema json.RawMessage
}

type hook struct {
	event, matcher string
	opts           HookOptions
	h              HookHandler
}

func (h *hook) matches(toolName string) bool {
	if h.matcher == "*" {
		return true
	}
	ok, _ := path.Match(h.matcher, toolName)
	return ok
}

type command struct {
	name, description string
	h                 CommandHandler
}

// A Server is a capability server built from handlers. Create it with
// [NewServer], register handlers, then call [Server.Serve]. A Server serves
// one connection in its lifetime. Its host-facing methods ([Server.Status],
// [Server.Ask], [Server.Log], [Server.Init]) are safe for concurrent use.
type Server struct {
	info Info
	log  hclog.Logger

	// The registry. It is frozen when serving starts and read without
	// locks afterwards.
	frozen          atomic.Bool
	regMu           sync.Mutex
	tools           map[string]*tool
	toolOrder       []*tool
	hooks           []*hook
	staticPrompt    string
	hasPrompt       bool
	dynamicPrompt   PromptFunc
	commands        map[string]*command
	commandOrder    []*command
	mcpServers      []yep.MCPServerDecl
	onConfig        func(cfg json.RawMessage) error
	onConfigChanged func(ctx context.Context, cfg json.RawMessage) (restart bool, err error)
	onTrace         func(ev yep.TraceEventParams)
	onWorkspace     func(root string)
	provider        ProviderFunc
	result          yep.InitializeResult // the handshake template

	// Connection state.
	life     context.Context // cancelled when ServeConn returns
	conn     atomic.Pointer[jsonrpc.Conn]
	sess     atomic.Pointer[session]
	initMu   sync.Mutex // serialises initialize
	shutdown atomic.Bool
	exit     chan struct{}
	exitOnce sync.Once
	events   *eventQueue
}

// session is what the handshake settled; it is immutable once stored.
type session struct {
	params yep.InitializeParams
	// What the host advertised, for the gated server-to-host methods.
	streaming, status, uiAsk, log bool
}

// NewServer returns a server with no handlers.
func NewServer(info Info, opts Options) *Server {
	log := opts.Logger
	if log == nil {
		name := info.Name
		if name == "" {
			name = "extension"
		}
		log = hclog.New(&hclog.LoggerOptions{Name: name, Output: os.Stderr, Level: hclog.Info})
	}
	return &Server{
		info:     info,
		log:      log,
		tools:    map[string]*tool{},
		commands: map[string]*command{},
		exit:     make(chan struct{}),
	}
}

// register runs f under the registry lock, panicking if serving started.
func (s *Server) register(what string, f func()) {
	s.regMu.Lock()
	defer s.regMu.Unlock()
	if s.frozen.Load() {
		panic(fmt.Sprintf("sdk: %s called after Serve started; register every handler before serving", what))
	}
	f()
}

// Tool registers a tool. The server announces "tools" and lists name in
// capability_params.tools. It panics if name is empty or already
// registered.
func (s *Server) Tool(name string, h ToolHandler) {
	s.addTool(fmt.Sprintf("Tool(%q)", name), name, h, ToolOptions{})
}

// StreamingTool registers a tool that streams progress with
// [ToolCall.Update] and [ToolCall.Progress]. The server also announces
// "streaming".
func (s *Server) StreamingTool(name string, h ToolHandler) {
	s.addTool(fmt.Sprintf("StreamingTool(%q)", name), name, h, ToolOptions{Streaming: true})
}

func (s *Server) addTool(what, name string, h ToolHandler, o ToolOptions) {
	s.register(what, func() {
		if name == "" || h == nil {
			panic(fmt.Sprintf("sdk: %s needs a name and a handler", what))
		}
		if _, dup := s.tools[name]; dup {
			panic(fmt.Sprintf("sdk: tool %q is registered twice; tool names must be unique", name))
		}
		t := &tool{name: name, streaming: o.Streaming, h: h,
			inputSchema: schemaOption(what, "InputSchema", o.InputSchema), outputSchema: schemaOption(what, "OutputSchema", o.OutputSchema)}
		s.tools[name] = t
		s.toolOrder = append(s.toolOrder, t)
	})
}

// OnHook subscribes h to a hook event (e.g. [yep.HookPreToolUse]) for the
// tools whose name matches the glob matcher ([path.Match] syntax; "*"
// matches every tool and is called out to the user at approval time). The
// server announces "hooks" and the subscription in capability_params.hooks.
// It panics on an empty event, a malformed glob, or an (event, matcher)
// pair registered twice.
func (s *Server) OnHook(event, matcher string, h HookHandler, opts ...HookOptions) {
	s.register(fmt.Sprintf("OnHook(%q, %q)", event, matcher), func() {
		if event == "" || matcher == "" || h == nil {
			panic("sdk: OnHook needs an event, a matcher (\"*\" for every tool) and a handler")
		}
		if _, err := path.Match(matcher, ""); err != nil {
			panic(fmt.Sprintf("sdk: OnHook(%q, %q): malformed glob: %v", event, matcher, err))
		}
		var o HookOptions
		if len(opts) > 0 {
			o = opts[0]
		}
		if o.OnError != "" && !slices.Contains(yep.HookOnErrors, o.OnError) {
			panic(fmt.Sprintf("sdk: OnHook(%q, %q): OnError is %q; want \"warn\" or \"block\"", event, matcher, o.OnError))
		}
		for _, k := range s.hooks {
			if k.event == event && k.matcher == matcher {
				panic(fmt.Sprintf("sdk: hook %s %q is registered twice", event, matcher))
			}
		}
		s.hooks = append(s.hooks, &hook{event: event, matcher: matcher, opts: o, h: h})
	})
}

// Prompt sets the static system-prompt contribution sent in the
// handshake. The server announces "prompt".
func (s *Server) Prompt(text string) {
	s.register("Prompt", func() {
		s.staticPrompt = text
		s.hasPrompt = true
	})
}

// DynamicPrompt sets the function the host calls (prompt/contribution, at
// most once per turn) for this turn's contribution. The server announces
// "prompt" and "dynamic_prompt". The static text, if any, remains the
// host's fallback.
func (s *Server) DynamicPrompt(f PromptFunc) {
	s.register("DynamicPrompt", func() {
		if f == nil {
			panic("sdk: DynamicPrompt needs a function")
		}
		s.dynamicPrompt = f
		s.hasPrompt = true
	})
}

// Command registers a slash command, shown to the user as
// "<extension>:<name>". The server announces "commands". It panics if name
// is empty or already registered.
func (s *Server) Command(name, description string, h CommandHandler) {
	s.register(fmt.Sprintf("Command(%q)", name), func() {
		if name == "" || h == nil {
			panic("sdk: Command needs a name and a handler")
		}
		if _, dup := s.commands[name]; dup {
			panic(fmt.Sprintf("sdk: command %q is registered twice", name))
		}
		c := &command{name: name, description: description, h: h}
		s.commands[name] = c
		s.commandOrder = append(s.commandOrder, c)
	})
}

// MCPServer declares an MCP server the extension provides. The server
// announces "mcp_servers".
func (s *Server) MCPServer(d yep.MCPServerDecl) {
	s.register(fmt.Sprintf("MCPServer(%q)", d.Name), func() {
		if d.Name == "" {
			panic("sdk: MCPServer needs a name")
		}
		s.mcpServers = append(s.mcpServers, d)
	})
}

// OnConfig sets the function called once with initialize.config (nil when
// the host sent none) during the handshake, before the result is sent. An
// error fails initialize with that error, so a server refuses a config it
// cannot use at startup.
func (s *Server) OnConfig(f func(cfg json.RawMessage) error) {
	s.register("OnConfig", func() { s.onConfig = f })
}

// OnConfigChanged sets the handler of config/changed. It reports whether
// the new config needs a restart ("restart-required") or was applied
// ("ok"). The server announces "config".
func (s *Server) OnConfigChanged(f func(ctx context.Context, cfg json.RawMessage) (restart bool, err error)) {
	s.register("OnConfigChanged", func() { s.onConfigChanged = f })
}

// OnTrace sets the function that receives trace/event notifications. It is
// called in arrival order on a dedicated goroutine, so a slow exporter
// never blocks the connection; when too many events are waiting, new ones
// are dropped with a warning. Events still queued when the connection ends
// are delivered before Serve returns, so a callback that never returns
// keeps Serve from returning. The server announces "trace".
func (s *Server) OnTrace(f func(ev yep.TraceEventParams)) {
	s.register("OnTrace", func() { s.onTrace = f })
}

// OnWorkspaceChanged sets the function called when the host repoints the
// workspace root (workspace/changed). It runs on the same goroutine as
// OnTrace, in arrival order.
func (s *Server) OnWorkspaceChanged(f func(root string)) {
	s.register("OnWorkspaceChanged", func() { s.onWorkspace = f })
}

// freeze fixes the registry and builds the handshake template.
func (s *Server) freeze() {
	s.regMu.Lock()
	defer s.regMu.Unlock()
	s.frozen.Store(true)

	has := map[string]bool{
		yep.CapCancel:        true,
		yep.CapDynamicPrompt: s.dynamicPrompt != nil,
		yep.CapTrace:         s.onTrace != nil,
		yep.CapConfig:        s.onConfigChanged != nil,
		yep.CapStatus:        s.info.Status,
		yep.CapUIAsk:         s.info.UIAsk,
		yep.CapLog:           s.info.Log,
	}
	params := yep.CapabilityParams{}
	contribute := func(token string, present bool, v any) {
		if !present {
			return
		}
		has[token] = true
		if err := params.Set(token, v); err != nil {
			panic(fmt.Sprintf("sdk: encoding capability_params.%s: %v", token, err))
		}
	}
	tools := make([]yep.ToolDecl, len(s.toolOrder))
	for i, t := range s.toolOrder {
		tools[i] = yep.ToolDecl{Name: t.name, InputSchema: t.inputSchema, OutputSchema: t.outputSchema}
		has[yep.CapStreaming] = has[yep.CapStreaming] || t.streaming
	}
	subs := make([]yep.HookSubscription, len(s.hooks))
	for i, h := range s.hooks {
		subs[i] = yep.HookSubscription{Event: h.event, Matcher: h.matcher, TimeoutMS: h.opts.TimeoutMS, OnError: h.opts.OnError}
	}
	commands := make([]yep.CommandDecl, len(s.commandOrder))
	for i, c := range s.commandOrder {
		commands[i] = yep.CommandDecl{Name: c.name, Description: c.description}
	}
	contribute(yep.CapTools, len(tools) > 0, tools)
	contribute(yep.CapHooks, len(subs) > 0, subs)
	contribute(yep.CapPrompt, s.hasPrompt, yep.PromptDecl{Static: s.staticPrompt, Dynamic: s.dynamicPrompt != nil})
	contribute(yep.CapCommands, len(commands) > 0, commands)
	contribute(yep.CapMCPServers, len(s.mcpServers) > 0, s.mcpServers)

	var caps yep.Capabilities
	for _, token := range yep.KnownCapabilities {
		if has[token] {
			caps = append(caps, token)
		}
	}
	if len(params) == 0 {
		params = nil
	}
	s.result = yep.InitializeResult{
		Name:             s.info.Name,
		Version:          s.info.Version,
		Capabilities:     caps,
		CapabilityParams: params,
	}
}

// Serve runs the server over os.Stdin and os.Stdout until the host sends
// shutdown and exit, closes stdin, or ctx is cancelled. In-flight handlers
// are cancelled and waited for before it returns. It returns nil on exit or
// end of input, ctx's error when ctx ended, and otherwise the error that
// broke the connection.
func (s *Server) Serve(ctx context.Context) error {
	return s.ServeConn(ctx, stdinReader(), os.Stdout)
}

// ServeConn is [Server.Serve] over r and w. When r implements io.Closer,
// it is closed on exit or cancellation so the connection's reader stops;
// otherwise ServeConn also waits for r to end.
func (s *Server) ServeConn(ctx context.Context, r io.Reader, w io.Writer) error {
	if s.frozen.Load() {
		return errors.New("sdk: this Server has already served a connection; create a new one with NewServer")
	}
	s.freeze()
	var stop context.CancelFunc
	s.life, stop = context.WithCancel(ctx)
	defer stop()

	s.events = newEventQueue(s.log, maxQueuedEvents)
	opts := jsonrpc.Options{
		Handler: jsonrpc.HandlerFunc(s.handle),
		Logger:  s.log.Named("yep"),
	}
	if c, ok := r.(io.Closer); ok {
		opts.Closer = c
	}
	conn := jsonrpc.NewConn(r, w, opts)
	s.conn.Store(conn)

	var err error
	select {
	case <-conn.Done():
		if cause := conn.Err(); cause != nil && !errors.Is(cause, io.EOF) {
			err = fmt.Errorf("extension %q: reading from the host: %w", s.info.Name, cause)
		}
	case <-s.exit:
	case <-ctx.Done():
		err = ctx.Err()
	}
	// Cancel in-flight handlers, stop the reader, and wait for all of them;
	// then run the callbacks still queued.
	conn.Close()
	conn.Wait()
	s.sess.Store(nil)
	s.events.close()
	return err
}

// Init returns the initialize params the host sent, once the handshake has
// completed; before that, the zero value.
func (s *Server) Init() yep.InitializeParams {
	if ss := s.sess.Load(); ss != nil {
		return ss.params
	}
	return yep.InitializeParams{}
}

// Status sets the extension's status text in the host's status bar; empty
// text clears it. It needs Info.Status and a host that advertised
// "status"; otherwise it returns an error matching [ErrNotDeclared] or
// [ErrNotAdvertised] and sends nothing.
func (s *Server) Status(text string) error {
	if _, err := s.gate("Status", yep.MethodStatusChanged, s.info.Status, "Info.Status", func(ss *session) bool { return ss.status }); err != nil {
		return err
	}
	if err := s.conn.Load().Notify(context.Background(), yep.MethodStatusChanged, yep.StatusChangedParams{Text: text}); err != nil {
		return fmt.Errorf("extension %q: sending status/changed: %w", s.info.Name, err)
	}
	return nil
}

// Ask asks the user a question through the host (the ui/ask reverse
// request) and waits for the answer or ctx. It needs Info.UIAsk and a host
// that advertised "ui_ask"; otherwise it returns an error matching
// [ErrNotDeclared] or [ErrNotAdvertised] and sends nothing. A user who
// dismisses the question yields a result with Cancelled set, not an error.
func (s *Server) Ask(ctx context.Context, q yep.UIAskParams) (yep.UIAskResult, error) {
	var res yep.UIAskResult
	if _, err := s.gate("Ask", yep.MethodUIAsk, s.info.UIAsk, "Info.UIAsk", func(ss *session) bool { return ss.uiAsk }); err != nil {
		return res, err
	}
	if err := s.conn.Load().Call(ctx, yep.MethodUIAsk, q, &res); err != nil {
		return yep.UIAskResult{}, fmt.Errorf("extension %q: ui/ask: %w", s.info.Name, err)
	}
	return res, nil
}

// gate checks that a server-to-host method may be sent.
func (s *Server) gate(fn, method string, declared bool, field string, host func(*session) bool) (*session, error) {
	if !declared {
		return nil, fmt.Errorf("extension %q: %s: %s is %w: set %s in sdk.Info (and declare it in the manifest)", s.info.Name, fn, method, ErrNotDeclared, field)
	}
	ss := s.sess.Load()
	if ss == nil {
		return nil, fmt.Errorf("extension %q: %s: %w; call it from a handler or after OnConfig", s.info.Name, fn, ErrNotInitialized)
	}
	if !host(ss) {
		return nil, fmt.Errorf("extension %q: %s: %s is %w (it has no surface for it in this mode); carry on without it", s.info.Name, fn, method, ErrNotAdvertised)
	}
	return ss, nil
}

// Log records a structured log line: to the host as a log notification
// when Info.Log is set and the host advertised "log", otherwise to the
// local logger (stderr). level is "trace", "debug", "info", "warn" or
// "error"; keyvals alternate keys (strings) and values.
func (s *Server) Log(level, msg string, keyvals ...any) {
	if ss := s.sess.Load(); ss != nil && s.info.Log && ss.log {
		p := yep.LogParams{Level: level, Message: msg}
		if len(keyvals) > 0 {
			fields := make(map[string]any, len(keyvals)/2)
			for i := 0; i < len(keyvals); i += 2 {
				var v any // nil for a key without a value
				if i+1 < len(keyvals) {
					v = keyvals[i+1]
				}
				if e, ok := v.(error); ok {
					v = e.Error()
				}
				fields[fmt.Sprint(keyvals[i])] = v
			}
			if raw, err := json.Marshal(fields); err == nil {
				p.Fields = raw
			}
		}
		if err := s.conn.Load().Notify(context.Background(), yep.MethodLog, p); err == nil {
			return
		}
	}
	s.log.Log(hclog.LevelFromString(level), msg, keyvals...)
}

// A ToolCall is one tool invocation handed to a [ToolHandler].
type ToolCall struct {
	// ID is the host's tool_call_id.
	ID string
	// Name is the tool name.
	Name string
	// Args are the raw JSON arguments; nil when the host sent none.
	Args json.RawMessage
	// SessionID is the session the call belongs to, if the host sent it.
	SessionID string
	// RequestID is the JSON-RPC id of the tool/call request; tool/update
	// notifications carry it as request_id.
	RequestID yep.ID

	s         *Server
	ctx       context.Context
	streaming bool
}

// Bind decodes the arguments into v as [encoding/json.Unmarshal] does
// (the arguments are the tool's own, not protocol, so an untagged field
// matches its name in any case). Missing arguments decode as {}, so v
// keeps its zero values.
func (c *ToolCall) Bind(v any) error {
	if err := bindArgs(c.Args, v); err != nil {
		return fmt.Errorf("tool %q: decoding arguments: %w", c.Name, err)
	}
	return nil
}

// Update streams a chunk of partial output to the host as tool/update. It
// returns an error matching [ErrNotDeclared] when the tool was registered
// with [Server.Tool] rather than [Server.StreamingTool], and
// [ErrNotAdvertised] when the host did not advertise "streaming" (nothing
// is sent; handlers may ignore that error). Updates are delivered before
// the call's result.
func (c *ToolCall) Update(output string) error {
	return c.send(yep.ToolUpdateParams{Output: output})
}

// Progress reports progress as tool/update, with the same rules as
// [ToolCall.Update]. total may be 0 when unknown.
func (c *ToolCall) Progress(current, total float64, message string) error {
	return c.send(yep.ToolUpdateParams{Progress: &yep.Progress{Current: current, Total: total, Message: message}})
}

func (c *ToolCall) send(p yep.ToolUpdateParams) error {
	if !c.streaming {
		return fmt.Errorf("tool %q: tool/update is %w: register the tool with StreamingTool", c.Name, ErrNotDeclared)
	}
	ss := c.s.sess.Load()
	if ss == nil {
		return fmt.Errorf("tool %q: tool/update: %w", c.Name, ErrNotInitialized)
	}
	if !ss.streaming {
		return fmt.Errorf("tool %q: tool/update is %w", c.Name, ErrNotAdvertised)
	}
	p.RequestID = c.RequestID
	p.ToolCallID = c.ID
	if err := c.s.conn.Load().Notify(c.ctx, yep.MethodToolUpdate, p); err != nil {
		return fmt.Errorf("tool %q: sending tool/update: %w", c.Name, err)
	}
	return nil
}

// A HookEvent is one hook firing handed to a [HookHandler].
type HookEvent struct {
	// Event is the hook event, e.g. "pre_tool_use".
	Event string
	// ToolName is the tool the event concerns.
	ToolName string
	// Matcher is the glob of the subscription that fired.
	Matcher string
	// ToolCallID is the host's id of the tool call, if sent.
	ToolCallID string
	// Args are the tool call's raw arguments (already mutated by earlier
	// subscriptions of this server, if any).
	Args json.RawMessage
	// Result is the tool's result, for post_tool_use.
	Result *yep.ToolResult
	// Payload is the firing's whole payload, with the fields of the
	// lifecycle events (prompt, source, message, error, stop_hook_active).
	Payload yep.HookPayload
}

// Bind decodes the tool call's arguments into v, as [ToolCall.Bind] does.
func (h *HookEvent) Bind(v any) error {
	if err := bindArgs(h.Args, v); err != nil {
		return fmt.Errorf("hook %s: decoding the arguments of tool %q: %w", h.Event, h.ToolName, err)
	}
	return nil
}

// bindArgs decodes a tool call's arguments into v; none leave v as it is.
func bindArgs(args json.RawMessage, v any) error {
	if len(args) == 0 || string(args) == "null" {
		return nil
	}
	return stdjson.Unmarshal(args, v)
}

func joinNames[T any](items []T, name func(T) string) string {
	names := make([]string, len(items))
	for i, it := range items {
		names[i] = name(it)
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
