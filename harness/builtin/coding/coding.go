package coding

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
)

// Name is the capability ref of [Coding].
const Name = "builtin:coding"

// Defaults of [Options].
const (
	DefaultBashTimeout = 2 * time.Minute
	MaxBashTimeout     = 10 * time.Minute
	DefaultOutputCap   = 30_000
	DefaultReadCap     = 100_000
	DefaultReadLines   = 2000
	DefaultListCap     = 1000
	DefaultGrepCap     = 200
	DefaultKillGrace   = 2 * time.Second
)

// Options configure [New]. Every field's zero value means the default
// named beside it.
type Options struct {
	// Root returns the session's workspace root, asked on every call so a
	// /workspace switch applies at once. Nil or "" refuses every tool.
	Root func() string
	// Scrub, if set, redacts stored secrets from the text a tool returns or
	// streams (file contents, command output). Nil returns it verbatim.
	Scrub func(string) string
	// Env is bash's environment. Nil means the host's.
	Env []string
	// BashTimeout is a command's timeout when the call gives none: 0 means
	// [DefaultBashTimeout]. MaxBashTimeout caps what a call may ask for: 0
	// means [MaxBashTimeout].
	BashTimeout, MaxBashTimeout time.Duration
	// KillGrace is how long a timed-out or cancelled command's process
	// group has between SIGTERM and SIGKILL: 0 means [DefaultKillGrace].
	KillGrace time.Duration
	// OutputCap bounds the bash output a result holds, in bytes: the head
	// and the tail are kept with a note of what was left out. 0 means
	// [DefaultOutputCap].
	OutputCap int
	// ReadCap bounds the bytes read_file returns from one call: 0 means
	// [DefaultReadCap]. ReadLines is its default line limit: 0 means
	// [DefaultReadLines].
	ReadCap, ReadLines int
	// ListCap bounds list_files entries, GrepCap grep matches, when the
	// call asks for no fewer: 0 means [DefaultListCap], [DefaultGrepCap].
	ListCap, GrepCap int
}

// Coding is the built-in capability "builtin:coding". Its tools act on the
// workspace root only (see the package documentation for the path rule).
// It is safe for concurrent use.
type Coding struct {
	host.Base
	o Options
}

// New returns the capability configured by o.
func New(o Options) *Coding {
	if o.BashTimeout <= 0 {
		o.BashTimeout = DefaultBashTimeout
	}
	if o.MaxBashTimeout <= 0 {
		o.MaxBashTimeout = MaxBashTimeout
	}
	if o.BashTimeout > o.MaxBashTimeout {
		o.BashTimeout = o.MaxBashTimeout
	}
	if o.KillGrace <= 0 {
		o.KillGrace = DefaultKillGrace
	}
	if o.OutputCap <= 0 {
		o.OutputCap = DefaultOutputCap
	}
	if o.ReadCap <= 0 {
		o.ReadCap = DefaultReadCap
	}
	if o.ReadLines <= 0 {
		o.ReadLines = DefaultReadLines
	}
	if o.ListCap <= 0 {
		o.ListCap = DefaultListCap
	}
	if o.GrepCap <= 0 {
		o.GrepCap = DefaultGrepCap
	}
	return &Coding{o: o}
}

// Name implements [host.Capability].
func (*Coding) Name() string { return Name }

// Tools implements [host.Capability].
func (c *Coding) Tools() []host.ToolDef {
	return []host.ToolDef{
		{Name: "read_file", NeverDefer: true, Risk: "low", InputSchema: readSchema,
			Description: fmt.Sprintf("Read a text file in the workspace. path is relative to the workspace root (or absolute inside it). Returns the file's lines verbatim, at most %d lines and %d bytes per call; offset (1-based line) and limit page through a longer file, and a note at the end says where to continue.", c.o.ReadLines, c.o.ReadCap)},
		{Name: "write_file", NeverDefer: true, Risk: "medium", InputSchema: writeSchema,
			Description: "Create or overwrite a file in the workspace with content, creating missing parent directories. The file is replaced atomically; an existing file keeps its permissions. To change part of a file, prefer edit_file."},
		{Name: "edit_file", NeverDefer: true, Risk: "medium", InputSchema: editSchema,
			Description: "Replace exact text in a workspace file. old_string must match the file byte for byte (whitespace and indentation included) and occur exactly once, unless replace_all is true; include enough surrounding lines to make it unique. Read the file first."},
		{Name: "list_files", NeverDefer: true, Risk: "low", InputSchema: listSchema,
			Description: fmt.Sprintf("List files under a workspace directory (default: the root), recursively, skipping .git; directories end in /. pattern filters by a glob relative to path, where ** spans directories (\"**/*.go\", \"cmd/*/main.go\"). Paths are relative to the workspace root; at most %d entries unless max_results says fewer.", c.o.ListCap)},
		{Name: "grep", NeverDefer: true, Risk: "low", InputSchema: grepSchema,
			Description: fmt.Sprintf("Search file contents under a workspace path (a directory, recursively, or one file) for a regular expression (Go RE2 syntax). Prints path:line: text per matching line, skipping .git and binary files; glob limits the files searched by name (\"*.go\"). At most %d matches unless max_results says fewer.", c.o.GrepCap)},
		{Name: "bash", NeverDefer: true, Risk: "high", Streaming: true, InputSchema: bashSchema,
			TimeoutMS:   int((c.o.MaxBashTimeout + c.o.KillGrace + time.Minute) / time.Millisecond),
			Description: fmt.Sprintf("Run a command with bash -c in the workspace root. stdout and stderr are combined in the order written and stream while it runs; the result holds the output (the head and tail of at most %d bytes) and the exit status, and a non-zero status is an error. timeout_ms defaults to %d and may be at most %d; on timeout the command and everything it started are killed. Background processes do not outlive the command. Use read_file, list_files and grep rather than cat, find and grep.", c.o.OutputCap, c.o.BashTimeout.Milliseconds(), c.o.MaxBashTimeout.Milliseconds())},
	}
}

var (
	readSchema  = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"the file, relative to the workspace root"},"offset":{"type":"integer","minimum":1,"description":"the first line to return, 1-based (default 1)"},"limit":{"type":"integer","minimum":1,"description":"how many lines to return"}},"required":["path"],"additionalProperties":false}`)
	writeSchema = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"the file, relative to the workspace root"},"content":{"type":"string","description":"the file's entire new content"}},"required":["path","content"],"additionalProperties":false}`)
	editSchema  = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"the file, relative to the workspace root"},"old_string":{"type":"string","minLength":1,"description":"the exact text to replace"},"new_string":{"type":"string","description":"the text to put in its place"},"replace_all":{"type":"boolean","description":"replace every occurrence (default: old_string must occur once)"}},"required":["path","old_string","new_string"],"additionalProperties":false}`)
	listSchema  = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"the directory to list, relative to the workspace root (default: the root)"},"pattern":{"type":"string","description":"a glob relative to path; ** spans directories"},"max_results":{"type":"integer","minimum":1}},"required":[],"additionalProperties":false}`)
	grepSchema  = json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string","minLength":1,"description":"a regular expression, Go RE2 syntax"},"path":{"type":"string","description":"a directory or file relative to the workspace root (default: the root)"},"glob":{"type":"string","description":"search only files whose name matches this glob, e.g. *.go"},"case_insensitive":{"type":"boolean"},"max_results":{"type":"integer","minimum":1}},"required":["pattern"],"additionalProperties":false}`)
	bashSchema  = json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","minLength":1,"description":"the command line, run with bash -c in the workspace root"},"timeout_ms":{"type":"integer","minimum":1,"description":"the timeout in milliseconds"}},"required":["command"],"additionalProperties":false}`)
)

// CallTool implements [host.Capability]. A refused path, a missing file or
// a failed command is an is_error result the agent reads; an error is
// returned only for an unknown tool or a cancelled call.
func (c *Coding) CallTool(ctx context.Context, call host.ToolCall, onUpdate func(yep.ToolUpdateParams)) (yep.ToolResult, error) {
	var run func(context.Context, workspace, json.RawMessage, func(string)) (yep.ToolResult, error)
	switch call.Name {
	case "read_file":
		run = c.readFile
	case "write_file":
		run = c.writeFile
	case "edit_file":
		run = c.editFile
	case "list_files":
		run = c.listFiles
	case "grep":
		run = c.grep
	case "bash":
		run = c.bash
	default:
		return yep.ToolResult{}, fmt.Errorf("%w: %s has no tool %q", yep.ErrMethodNotFound, Name, call.Name)
	}
	root := ""
	if c.o.Root != nil {
		root = c.o.Root()
	}
	ws, err := openWorkspace(root)
	if err != nil {
		return failed(fmt.Errorf("%s: %w", call.Name, err)), nil
	}
	update := func(text string) {
		if onUpdate != nil {
			onUpdate(yep.ToolUpdateParams{ToolCallID: call.ID, Output: c.scrub(text)})
		}
	}
	res, err := run(ctx, ws, call.Args, update)
	if err != nil {
		return yep.ToolResult{}, err
	}
	res.Output = c.scrub(res.Output)
	return res, nil
}

func (c *Coding) scrub(s string) string {
	if c.o.Scrub == nil {
		return s
	}
	return c.o.Scrub(s)
}

// failed is an is_error result carrying err's message.
func failed(err error) yep.ToolResult { return yep.ToolResult{IsError: true, Output: err.Error()} }

// decode decodes a tool's arguments; the session has checked them
// against the tool's schema when it has a validator.
func decode(tool string, args json.RawMessage, v any) error {
	if err := json.Unmarshal(args, v); err != nil {
		return fmt.Errorf("%s: bad arguments: %w", tool, err)
	}
	return nil
}

// data encodes a result's structured part.
func data(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
