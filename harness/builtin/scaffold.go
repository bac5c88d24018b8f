package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"

	"yolop.dev/core/yep"
	"yolop.dev/harness/scaffold"
)

// ScaffoldArgs are the arguments of the scaffold_extension tool: the
// options of `yolop ext new`, by the same names.
type ScaffoldArgs struct {
	Name          string   `json:"name"`
	Lang          string   `json:"lang"`
	Dir           string   `json:"dir,omitempty"`
	Tools         []string `json:"tools,omitempty"`
	Hooks         []string `json:"hooks,omitempty"`
	Prompt        bool     `json:"prompt,omitempty"`
	DynamicPrompt bool     `json:"dynamic_prompt,omitempty"`
	Commands      []string `json:"commands,omitempty"`
	Status        bool     `json:"status,omitempty"`
	Ask           bool     `json:"ask,omitempty"`
	Config        bool     `json:"config,omitempty"`
	Skills        bool     `json:"skills,omitempty"`
	// NoBuild skips the build steps of a Go or Rust package.
	NoBuild bool `json:"no_build,omitempty"`
}

// scaffoldSchema is the input schema of scaffold_extension; the language
// and hook-event enums come from the scaffold and protocol packages.
var scaffoldSchema = func() json.RawMessage {
	list := func(desc string) map[string]any {
		return map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": desc}
	}
	flag := func(desc string) map[string]any { return map[string]any{"type": "boolean", "description": desc} }
	s := map[string]any{
		"type":                 "object",
		"required":             []string{"name", "lang"},
		"additionalProperties": false,
		"properties": map[string]any{
			"name": map[string]any{"type": "string", "description": "the extension name: lowercase letters, digits, '-' and '_'"},
			"lang": map[string]any{"type": "string", "enum": scaffold.Langs,
				"description": "python and typescript are single dependency-free files that need no build (the fastest path); go and rust are built into bin/"},
			"dir":            map[string]any{"type": "string", "description": "the package directory to create, inside the workspace (default: <workspace>/<name>); it must not exist"},
			"tools":          list("tool names (letters, digits, '_'); each gets a schema, example arguments and a handle_tool_<name> seam"),
			"hooks":          list(fmt.Sprintf("hook subscriptions: %s, optionally with a tool-name glob after ':' (default %q), e.g. pre_tool_use:bash", strings.Join(yep.HookEvents, " or "), scaffold.DefaultHookMatcher)),
			"prompt":         flag("a static system-prompt contribution"),
			"dynamic_prompt": flag("a per-turn prompt contribution with a handle_prompt seam"),
			"commands":       list("slash-command names, served as /<name>:<command>"),
			"status":         flag("opt into status/changed, with an emit_status helper"),
			"ask":            flag("opt into ui/ask, with an ask helper"),
			"config":         flag("a config_schema with one example field, handled on config/changed"),
			"skills":         flag("ship skills/<name>/SKILL.md, contributed read-only when enabled"),
			"no_build":       flag("do not run the build steps of a go or rust package"),
		},
	}
	b, _ := json.Marshal(s)
	return b
}()

// scaffold runs scaffold_extension: the package is written inside the
// workspace, built when it needs building, and the result names the
// seams and the commands that install, check and enable it.
func (e *Extensions) scaffold(ctx context.Context, raw json.RawMessage, o ExtensionsOptions, update func(yep.ToolUpdateParams), callID string) yep.ToolResult {
	var a ScaffoldArgs
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return toolErr(fmt.Errorf("scaffold_extension: arguments: %w", err))
	}
	ws := o.WorkspaceRoot
	if ws == "" {
		return toolErr(fmt.Errorf("scaffold_extension: this session has no workspace to write into; run `yolop ext new %s --lang %s` in a terminal", a.Name, a.Lang))
	}
	dir := a.Dir
	if dir == "" {
		dir = a.Name
	}
	dir, err := within(ws, dir, "scaffold_extension", false)
	if err != nil {
		return toolErr(err)
	}
	r, err := scaffold.New(scaffold.Options{
		Name: a.Name, Lang: a.Lang, Dir: dir,
		Tools: a.Tools, Hooks: a.Hooks, Prompt: a.Prompt, DynamicPrompt: a.DynamicPrompt,
		Commands: a.Commands, Status: a.Status, Ask: a.Ask, Config: a.Config, Skills: a.Skills,
	})
	if err != nil {
		return toolErr(fmt.Errorf("scaffold_extension: %w", err))
	}
	text := r.Text()
	if len(r.Build) > 0 && !a.NoBuild {
		var w io.Writer
		if update != nil {
			w = &updateWriter{id: callID, f: update}
		}
		if err := r.RunBuild(ctx, w); err != nil {
			return yep.ToolResult{IsError: true, Output: text + "\nthe build failed (the package is written; fix the cause and run the build step again):\n" + err.Error()}
		}
		text += "built " + r.Server + "\n"
	}
	data, _ := json.Marshal(r)
	return yep.ToolResult{Output: text, Data: data}
}

// within resolves dir against the workspace and refuses a path that
// leaves it (or is the workspace itself, unless root): the agent works
// where the user works, nowhere else. The check is on real paths,
// symlinks resolved (as core/skill checks a skill's files), so a link in
// the workspace that points out of it is not a way out; a link that
// stays inside is followed. Errors are prefixed with tool.
func within(ws, dir, tool string, root bool) (string, error) {
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(ws, dir)
	}
	dir = filepath.Clean(dir)
	realWS, err := filepath.EvalSymlinks(ws)
	if err != nil {
		return "", fmt.Errorf("%s: the workspace %s: %w", tool, ws, err)
	}
	real, err := realPath(dir)
	if err != nil {
		return "", fmt.Errorf("%s: %s: %w", tool, dir, err)
	}
	rel, err := filepath.Rel(realWS, real)
	if err != nil || (rel == "." && !root) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		where := dir
		if real != dir {
			where = fmt.Sprintf("%s (really %s, through a symbolic link)", dir, real)
		}
		return "", fmt.Errorf("%s: %s is not inside the workspace %s; choose a directory under it", tool, where, ws)
	}
	return dir, nil
}

// realPath is p with symlinks resolved in the part of it that exists; the
// rest, not there yet, is joined on as written.
func realPath(p string) (string, error) {
	var rest []string
	for {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", err
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// updateWriter streams build output as tool/update progress.
type updateWriter struct {
	mu sync.Mutex
	id string
	f  func(yep.ToolUpdateParams)
}

func (w *updateWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.f(yep.ToolUpdateParams{ToolCallID: w.id, Output: string(p)})
	return len(p), nil
}
