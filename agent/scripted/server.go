package scripted

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// maxBody bounds the request body the server reads.
const maxBody = 32 << 20

// argumentPiece is the size in bytes of the pieces a tool call's arguments
// are streamed in (cut at rune boundaries), a few bytes as a token is.
const argumentPiece = 6

// Options configure a [Server]. The zero value accepts any key and never
// rate-limits.
type Options struct {
	// APIKey, when set, is the key every request must carry as
	// "Authorization: Bearer <key>"; a missing or different key is answered
	// 401 with OpenAI's invalid_api_key error. Empty accepts any or none.
	APIKey string
	// RateLimit is how many chat completion requests, counted from the
	// first, are answered 429 with a Retry-After header before the script
	// answers any. Zero: none.
	RateLimit int
	// RetryAfter is the Retry-After those 429s carry, in whole seconds;
	// zero sends "0", so a client retries at once.
	RetryAfter int
}

// A Request is one HTTP request the server received, as recorded by
// [Server.Requests].
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
	// Chat is the decoded body of a chat completion request; nil for other
	// paths and for a body that is not a chat completion request.
	Chat *ChatRequest
	// Messages is the decoded body of an Anthropic Messages request; nil
	// for other paths and for a body that does not decode.
	Messages *MessagesRequest
	// Status is the HTTP status the server answered.
	Status int
	// Step is the index (from 0) of the step that answered, -1 for none.
	Step int
}

// A Server is a scripted OpenAI-compatible model endpoint. It is an
// [http.Handler]; [Server.Listen] also serves it on a TCP address of its
// own. Its methods may be called concurrently.
type Server struct {
	script *Script
	opts   Options

	mu        sync.Mutex
	cursor    int    // the first step that may answer the next request
	used      []bool // steps that have answered
	chats     int    // chat completion requests that reached the script
	limited   int    // 429s sent
	seq       int    // completions answered, for their ids
	requests  []Request
	closed    bool
	closeDone chan struct{} // closed when the first Close has finished
	handlers  sync.WaitGroup
	srv       *http.Server
	addr      string
	serveDone chan struct{}
	stopAfter func() bool
}

// NewServer returns a server that answers from script, which must be
// valid ([Script.Validate]); it does not listen until [Server.Listen].
func NewServer(script *Script, opts Options) *Server {
	return &Server{script: script, opts: opts, used: make([]bool, len(script.Steps)), closeDone: make(chan struct{})}
}

// Serve checks script, listens on addr (such as "127.0.0.1:0") and serves
// it until ctx is done or the returned server is closed. It returns once
// the server is listening; [Server.URL] is where to point a client.
func Serve(ctx context.Context, script *Script, addr string) (*Server, error) {
	if err := script.Validate(); err != nil {
		return nil, err
	}
	s := NewServer(script, Options{})
	if err := s.Listen(addr); err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { s.Close() })
	s.mu.Lock()
	s.stopAfter = stop
	s.mu.Unlock()
	return s, nil
}

// Listen serves the server on addr, such as "127.0.0.1:0" for a free
// loopback port, until [Server.Close].
func (s *Server) Listen(addr string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil || s.closed {
		return errors.New("scripted: Listen called twice or after Close")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("scripted: listen: %w", err)
	}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: time.Minute}
	s.addr = ln.Addr().String()
	s.serveDone = make(chan struct{})
	go func() {
		defer close(s.serveDone)
		_ = s.srv.Serve(ln) // ErrServerClosed after Close
	}()
	return nil
}

// URL is the server's base URL, such as http://127.0.0.1:43123, or "" before
// [Server.Listen]. A client's base URL is URL()+"/v1/".
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.addr == "" {
		return ""
	}
	return "http://" + s.addr
}

// Close stops the server: it closes the listener and every connection and
// waits for the requests being answered to return. Later requests to
// [Server.ServeHTTP] are answered 503. Close may be called more than once,
// and concurrently; every call returns once the server is closed.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		<-s.closeDone
		return nil
	}
	s.closed = true
	srv, done, stop := s.srv, s.serveDone, s.stopAfter
	s.mu.Unlock()
	defer close(s.closeDone)
	if stop != nil {
		stop()
	}
	var err error
	if srv != nil {
		err = srv.Close()
		<-done
	}
	s.handlers.Wait()
	if err != nil {
		return fmt.Errorf("scripted: close: %w", err)
	}
	return nil
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Verify reports whether every step of the script has answered a request:
// nil if so, otherwise an error naming the first step that has not.
func (s *Server) Verify() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, used := range s.used {
		if !used {
			st := &s.script.Steps[i]
			return fmt.Errorf("scripted: %s has not answered a request (it expects %s); %d of %d steps answered",
				st.label(i), st.When.describe(), countTrue(s.used), len(s.used))
		}
	}
	return nil
}

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// ServeHTTP answers POST /v1/chat/completions (OpenAI), POST /v1/messages
// (Anthropic) and GET /v1/models.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, "server_error", "", "the scripted model server is closed")
		return
	}
	s.handlers.Add(1)
	s.mu.Unlock()
	defer s.handlers.Done()

	rec := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Step: -1}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	rec.Body = body
	if err != nil {
		s.answerError(w, &rec, http.StatusBadRequest, "invalid_request_error", "", "reading the request body: "+err.Error())
		return
	}
	if !s.authorized(r) {
		typ := "invalid_request_error"
		if isAnthropic(rec.Path) {
			typ = "authentication_error"
		}
		s.answerError(w, &rec, http.StatusUnauthorized, typ, "invalid_api_key",
			"Incorrect API key provided. The scripted model server was configured with a different key.")
		return
	}
	switch {
	case r.URL.Path == "/v1/chat/completions" && r.Method == http.MethodPost:
		s.chatCompletion(w, &rec)
	case r.URL.Path == "/v1/messages" && r.Method == http.MethodPost:
		s.anthropicMessages(w, &rec)
	case r.URL.Path == "/v1/models" && r.Method == http.MethodGet:
		s.models(w, &rec)
	default:
		s.answerError(w, &rec, http.StatusNotFound, "invalid_request_error", "",
			fmt.Sprintf("Invalid URL (%s %s): the scripted model serves POST /v1/chat/completions, POST /v1/messages and GET /v1/models", r.Method, r.URL.Path))
	}
}

func (s *Server) authorized(r *http.Request) bool {
	if s.opts.APIKey == "" {
		return true
	}
	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		// Anthropic's own header, which its SDK sends for some credentials.
		key, ok = r.Header.Get("X-Api-Key"), r.Header.Get("X-Api-Key") != ""
	}
	return ok && subtle.ConstantTimeCompare([]byte(key), []byte(s.opts.APIKey)) == 1
}

func (s *Server) record(rec *Request, status int) {
	rec.Status = status
	s.mu.Lock()
	s.requests = append(s.requests, *rec)
	s.mu.Unlock()
}

// answerError records rec with status and answers an error in the shape
// of the API rec's path belongs to: OpenAI's, or Anthropic's for
// /v1/messages. An empty typ is chosen from the status.
func (s *Server) answerError(w http.ResponseWriter, rec *Request, status int, typ, code, msg string) {
	s.record(rec, status)
	if isAnthropic(rec.Path) {
		writeAnthropicError(w, status, typ, msg)
		return
	}
	writeError(w, status, typ, code, msg)
}

func writeError(w http.ResponseWriter, status int, typ, code, msg string) {
	if typ == "" {
		typ = "invalid_request_error"
		if status >= 500 {
			typ = "server_error"
		}
	}
	body := wireErrorBody{Message: msg, Type: typ}
	if code != "" {
		body.Code = &code
	}
	writeJSON(w, status, wireError{Error: body})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "scripted: encoding the answer: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data) // a client gone away is not the server's error
}

func (s *Server) models(w http.ResponseWriter, rec *Request) {
	model := s.script.Model
	if model == "" {
		model = "scripted"
	}
	s.record(rec, http.StatusOK)
	writeJSON(w, http.StatusOK, wireModelList{Object: "list", Data: []wireModel{{ID: model, Object: "model", OwnedBy: "yolop"}}})
}

// limit answers 429 and reports true while the rate limit of
// [Options.RateLimit] lasts.
func (s *Server) limit(w http.ResponseWriter, rec *Request) bool {
	s.mu.Lock()
	limited := s.limited < s.opts.RateLimit
	if limited {
		s.limited++
	}
	s.mu.Unlock()
	if limited {
		w.Header().Set("Retry-After", strconv.Itoa(s.opts.RetryAfter))
		typ := "requests"
		if isAnthropic(rec.Path) {
			typ = "rate_limit_error"
		}
		s.answerError(w, rec, http.StatusTooManyRequests, typ, "rate_limit_exceeded",
			"Rate limit reached for the scripted model. Please try again after the Retry-After delay.")
	}
	return limited
}

// step matches a request that ends as conv says against the script and
// returns the step that answers it with a completion's sequence number, or
// answers the request itself (a mismatch, or a step that fails) and
// returns -1.
func (s *Server) step(w http.ResponseWriter, rec *Request, conv *conversation, stream bool) (int, int) {
	s.mu.Lock()
	s.chats++
	n := s.chats
	step, miss := s.match(conv, n)
	if miss == "" {
		s.seq++
	}
	seq := s.seq
	s.mu.Unlock()
	if miss != "" {
		s.answerError(w, rec, http.StatusBadRequest, "invalid_request_error", "script_mismatch", miss)
		return -1, 0
	}
	rec.Step = step
	reply := &s.script.Steps[step].Reply
	if e := reply.Error; e != nil {
		status := e.Status
		if status == 0 {
			status = http.StatusInternalServerError
		}
		s.answerError(w, rec, status, e.Type, e.Code, e.Message)
		return -1, 0
	}
	if reply.StreamError != "" && !stream {
		s.answerError(w, rec, http.StatusInternalServerError, "", "", reply.StreamError)
		return -1, 0
	}
	s.record(rec, http.StatusOK)
	return step, seq
}

func (s *Server) chatCompletion(w http.ResponseWriter, rec *Request) {
	if s.limit(w, rec) {
		return
	}
	var req ChatRequest
	if err := json.Unmarshal(rec.Body, &req); err != nil {
		s.answerError(w, rec, http.StatusBadRequest, "invalid_request_error", "",
			"We could not parse the JSON body of your request: "+err.Error())
		return
	}
	rec.Chat = &req
	conv, msg := analyze(&req)
	if msg != "" {
		s.answerError(w, rec, http.StatusBadRequest, "invalid_request_error", "", msg)
		return
	}
	step, seq := s.step(w, rec, conv, req.Stream)
	if step < 0 {
		return
	}
	a := s.answer(req.Model, rec.Body, step, "chatcmpl-scripted-"+strconv.Itoa(seq))
	if req.Stream {
		a.stream(w, req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
	} else {
		writeJSON(w, http.StatusOK, a.completion())
	}
}

// match finds the step that answers the n-th chat request, which ends as
// c says, and moves the script on. Called with s.mu held. It returns the
// step's index, or a message saying what was expected and what came.
func (s *Server) match(c *conversation, n int) (int, string) {
	steps := s.script.Steps
	var expected []string
	for i := s.cursor; i < len(steps); i++ {
		st := &steps[i]
		if st.When.matches(c) {
			s.used[i] = true
			s.cursor = i + 1
			if st.Repeat {
				s.cursor = i
			}
			return i, ""
		}
		expected = append(expected, fmt.Sprintf("%s expects %s", st.label(i), st.When.describe()))
		if !st.Repeat || !s.used[i] {
			break
		}
	}
	if len(expected) == 0 {
		return -1, fmt.Sprintf("scripted model: request %d came after the script's last step (%d steps, all answered); %s",
			n, len(steps), c.describe())
	}
	return -1, fmt.Sprintf("scripted model: request %d does not match the script: %s; %s",
		n, strings.Join(expected, ", or "), c.describe())
}

// A conversation is what matching reads from a chat request.
type conversation struct {
	lastUser *string      // the last message's text, when it is a user message
	results  []toolResult // the tool results after the last assistant message
	last     string       // the last message's role
	offered  map[string]bool
	tools    []string // offered tool names, in order
}

type toolResult struct {
	tool, text string
}

// describe says how the request ends, for a mismatch message.
func (c *conversation) describe() string {
	var b strings.Builder
	switch {
	case c.lastUser != nil:
		fmt.Fprintf(&b, "the request ends with the user message %q", clip(*c.lastUser))
	case len(c.results) > 0:
		fmt.Fprintf(&b, "the request ends with %d tool result(s):", len(c.results))
		for i, r := range c.results {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " from %q %q", r.tool, clip(r.text))
		}
	default:
		fmt.Fprintf(&b, "the request ends with a %s message", c.last)
	}
	if len(c.tools) == 0 {
		b.WriteString(" and offers no tools")
	} else {
		fmt.Fprintf(&b, " and offers the tools %s", strings.Join(c.tools, ", "))
	}
	return b.String()
}

// clip shortens s for a message.
func clip(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// analyze checks req as the real API does and reads what matching needs.
// It returns a message for a 400 when req is not a valid request.
func analyze(req *ChatRequest) (*conversation, string) {
	if req.Model == "" {
		return nil, "you must provide a model parameter"
	}
	if len(req.Messages) == 0 {
		return nil, "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead."
	}
	if req.StreamOptions != nil && !req.Stream {
		return nil, "The 'stream_options' parameter is only allowed when 'stream' is set to true."
	}
	c := &conversation{offered: map[string]bool{}}
	for _, t := range req.Tools {
		c.offered[t.Function.Name] = true
		c.tools = append(c.tools, t.Function.Name)
	}
	// pending maps the ids of the last assistant message's tool calls that
	// no tool message has answered yet to their tool names; order keeps
	// them in the order they were called.
	pending := map[string]string{}
	var order []string
	var calls map[string]bool // every call of the last assistant message
	for i := range req.Messages {
		m := &req.Messages[i]
		switch m.Role {
		case "system", "developer", "user", "assistant", "tool", "function":
		default:
			return nil, fmt.Sprintf("Invalid value: '%s'. Supported values are: 'system', 'developer', 'user', 'assistant', 'tool' and 'function'. (messages[%d].role)", m.Role, i)
		}
		if m.Role != "tool" && len(pending) > 0 {
			return nil, unansweredMessage(pending, order)
		}
		switch m.Role {
		case "assistant":
			calls, order = map[string]bool{}, nil
			for _, tc := range m.ToolCalls {
				pending[tc.ID] = tc.Function.Name
				calls[tc.ID] = true
				order = append(order, tc.ID)
			}
			c.results = nil
		case "tool":
			name, ok := pending[m.ToolCallID]
			if !ok {
				if calls[m.ToolCallID] {
					return nil, fmt.Sprintf("Invalid parameter: messages[%d] answers tool_call_id %q a second time.", i, m.ToolCallID)
				}
				return nil, fmt.Sprintf("Invalid parameter: messages with role 'tool' must be a response to a preceding message with 'tool_calls' (messages[%d], tool_call_id %q).", i, m.ToolCallID)
			}
			delete(pending, m.ToolCallID)
			c.results = append(c.results, toolResult{tool: name, text: m.Text()})
		default:
			c.results = nil
		}
	}
	if len(pending) > 0 {
		return nil, unansweredMessage(pending, order)
	}
	last := &req.Messages[len(req.Messages)-1]
	c.last = last.Role
	if last.Role == "user" {
		t := last.Text()
		c.lastUser = &t
	}
	if last.Role != "tool" {
		c.results = nil
	}
	return c, ""
}

func unansweredMessage(pending map[string]string, order []string) string {
	var ids []string
	for _, id := range order {
		if _, ok := pending[id]; ok {
			ids = append(ids, id)
		}
	}
	return "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: " + strings.Join(ids, ", ")
}
