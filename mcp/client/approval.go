package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"yolop.dev/internal/atomicfile"
)

// A Review is what a workspace's .mcp.json would do, read without
// expanding or starting anything: the servers it names, exactly as
// written, and every host variable it would read. It is what the user
// approves, and what an approval pins.
type Review struct {
	// Path is the .mcp.json that was read.
	Path string `json:"path"`
	// Digest is "sha256:<hex>" of the file's bytes.
	Digest string `json:"digest"`
	// Servers are the servers the file names, by name.
	Servers []ServerReview `json:"servers"`
	// Vars are the host environment variables its ${VAR} references
	// read, sorted: what the repository chooses to send to the servers
	// it names.
	Vars []string `json:"vars,omitempty"`
}

// A ServerReview is one server of a [Review], as the file writes it
// (${VAR} references unexpanded).
type ServerReview struct {
	Name string `json:"name"`
	// Type is the transport as written ("" when the file names none).
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// ReviewFile reads the .mcp.json at path for consent. A missing file is
// (nil, nil); a file that is not valid JSON is an error naming it.
func ReviewFile(path string) (*Review, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: cannot be read: %w", path, err)
	}
	return reviewBytes(path, b)
}

func reviewBytes(path string, b []byte) (*Review, error) {
	var f fileJSON
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: not valid JSON (%w)", path, err)
	}
	sum := sha256.Sum256(b)
	r := &Review{Path: path, Digest: "sha256:" + hex.EncodeToString(sum[:])}
	vars := map[string]bool{}
	note := func(s string) {
		for _, m := range varRef.FindAllStringSubmatch(s, -1) {
			vars[m[1]] = true
		}
	}
	for _, n := range slices.Sorted(mapKeys(f.MCPServers)) {
		s := f.MCPServers[n]
		r.Servers = append(r.Servers, ServerReview{Name: n, Type: s.Type, Command: s.Command, Args: s.Args,
			Env: s.Env, URL: s.URL, Headers: s.Headers})
		note(s.Command)
		note(s.URL)
		for _, a := range s.Args {
			note(a)
		}
		for _, v := range s.Env {
			note(v)
		}
		for _, v := range s.Headers {
			note(v)
		}
	}
	r.Vars = slices.Sorted(mapKeys(vars))
	return r, nil
}

func mapKeys[M ~map[string]V, V any](m M) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// Summary is the review as the user reads it: one block per server (what
// it runs or where it connects, and what it is given), then the host
// variables the file reads.
func (r *Review) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s names %d MCP server(s):\n", r.Path, len(r.Servers))
	for _, s := range r.Servers {
		b.WriteString(s.line("  "))
	}
	if len(r.Vars) > 0 {
		fmt.Fprintf(&b, "It reads these variables of your environment and passes them on: %s\n", dollarList(r.Vars))
	}
	return b.String()
}

// line describes one server, indented.
func (s ServerReview) line(indent string) string {
	var b strings.Builder
	if s.URL != "" && s.Command == "" {
		fmt.Fprintf(&b, "%s%s: connects to %s\n", indent, clean(s.Name), clean(s.URL))
	} else {
		fmt.Fprintf(&b, "%s%s: runs %s\n", indent, clean(s.Name), shellWords(append([]string{s.Command}, s.Args...)))
	}
	for _, k := range slices.Sorted(mapKeys(s.Env)) {
		fmt.Fprintf(&b, "%s    env %s=%s\n", indent, clean(k), clean(s.Env[k]))
	}
	for _, k := range slices.Sorted(mapKeys(s.Headers)) {
		fmt.Fprintf(&b, "%s    header %s: %s\n", indent, clean(k), clean(s.Headers[k]))
	}
	return b.String()
}

// Diff describes what changed from prev, the approved review, to r: the
// servers added, removed or changed, and the variables newly read. It is
// empty when only formatting changed.
func (r *Review) Diff(prev *Review) string {
	var b strings.Builder
	old := map[string]ServerReview{}
	for _, s := range prev.Servers {
		old[s.Name] = s
	}
	seen := map[string]bool{}
	for _, s := range r.Servers {
		seen[s.Name] = true
		p, ok := old[s.Name]
		switch {
		case !ok:
			b.WriteString("+ new server\n" + s.line("    "))
		case s.line("") != p.line(""):
			b.WriteString("~ changed server, was\n" + p.line("    ") + "  now\n" + s.line("    "))
		}
	}
	for _, s := range prev.Servers {
		if !seen[s.Name] {
			fmt.Fprintf(&b, "- removed server %s\n", clean(s.Name))
		}
	}
	var added []string
	for _, v := range r.Vars {
		if !slices.Contains(prev.Vars, v) {
			added = append(added, v)
		}
	}
	if len(added) > 0 {
		fmt.Fprintf(&b, "+ now reads %s from your environment\n", dollarList(added))
	}
	return b.String()
}

func dollarList(vars []string) string {
	out := make([]string, len(vars))
	for i, v := range vars {
		out[i] = "$" + v
	}
	return strings.Join(out, ", ")
}

// shellWords quotes words that a shell would split, so the user reads the
// command line exactly.
func shellWords(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		if w == "" || strings.ContainsAny(w, " \t\n'\"\\$`;&|<>(){}*?[]#~") {
			w = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
		out[i] = clean(w)
	}
	return strings.Join(out, " ")
}

// clean replaces control and bidirectional-formatting characters with
// '?', so a file cannot move the terminal's cursor or reverse what the
// user reads.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || (r >= 0x7f && r < 0xa0) || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return '?'
		}
		return r
	}, s)
}

// ApprovalsFile is the file, in the config directory, where the user's
// answers about workspaces' .mcp.json files are pinned.
const ApprovalsFile = "mcp-approvals.json"

// Approvals pins the user's approval of each workspace's .mcp.json by the
// file's digest, keyed by the workspace's real path, in
// <configDir>/mcp-approvals.json. Writers take an exclusive file lock, so
// concurrent sessions approving different workspaces lose nothing.
type Approvals struct {
	path string
}

// NewApprovals returns the approvals kept in configDir.
func NewApprovals(configDir string) *Approvals {
	return &Approvals{path: filepath.Join(configDir, ApprovalsFile)}
}

// Path is the file the approvals live in.
func (a *Approvals) Path() string { return a.path }

type approvalsJSON struct {
	Version    int                `json:"version"`
	Workspaces map[string]*Review `json:"workspaces"`
}

// workspaceKey is the workspace's absolute path with links resolved, so
// two spellings of one directory share an approval.
func workspaceKey(ws string) string {
	ws, _ = filepath.Abs(ws)
	if real, err := filepath.EvalSymlinks(ws); err == nil {
		return real
	}
	return filepath.Clean(ws)
}

func (a *Approvals) load() (*approvalsJSON, error) {
	out := &approvalsJSON{Version: 1, Workspaces: map[string]*Review{}}
	b, err := os.ReadFile(a.path)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", a.path, err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return nil, fmt.Errorf("%s is not valid JSON (%v); fix or remove it (every workspace's MCP servers are then asked about again)", a.path, err)
	}
	if out.Workspaces == nil {
		out.Workspaces = map[string]*Review{}
	}
	return out, nil
}

// Lookup returns the review approved for workspace, or nil when none was.
func (a *Approvals) Lookup(workspace string) (*Review, error) {
	f, err := a.load()
	if err != nil {
		return nil, err
	}
	return f.Workspaces[workspaceKey(workspace)], nil
}

// Approve pins r as approved for workspace. A malformed approvals file is
// left as it is and reported.
func (a *Approvals) Approve(ctx context.Context, workspace string, r *Review) error {
	if err := os.MkdirAll(filepath.Dir(a.path), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(a.path), err)
	}
	fl := flock.New(a.path + ".lock")
	ok, err := fl.TryLockContext(ctx, 10*time.Millisecond)
	if err == nil && !ok {
		err = ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("waiting for the lock on %s: %w", a.path, err)
	}
	defer fl.Unlock()
	f, err := a.load()
	if err != nil {
		return err
	}
	f.Workspaces[workspaceKey(workspace)] = r
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", a.path, err)
	}
	return atomicfile.Write(a.path, append(b, '\n'), 0o600)
}

// A Consent asks the user whether the servers of r may start. prev is the
// review approved before, nil the first time: a front-end shows
// r.Diff(prev) then. It returns false when the user declines or cannot be
// asked.
type Consent func(ctx context.Context, r, prev *Review) (bool, error)

// Approve is a [Consent] that always says yes: the user said so up front
// (--yes).
func Approve(context.Context, *Review, *Review) (bool, error) { return true, nil }

// LoadApproved returns the servers of workspace's .mcp.json, expanded with
// lookup (nil: the host environment), only when the file's content is
// approved in approvals, or consent approves it now (the answer is then
// pinned). With a nil consent nothing is asked: an unapproved file starts
// nothing, and a warning says why and how to approve it. The servers are
// read from the same bytes that were approved.
func LoadApproved(ctx context.Context, workspace string, approvals *Approvals, consent Consent, lookup func(string) (string, bool)) ([]ServerConfig, []string) {
	path := filepath.Join(workspace, FileName)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: cannot be read: %v; its MCP servers are off", path, err)}
	}
	r, err := reviewBytes(path, b)
	if err != nil {
		return nil, []string{err.Error() + "; its MCP servers are off"}
	}
	if len(r.Servers) == 0 {
		return nil, nil
	}
	prev, err := approvals.Lookup(workspace)
	if err != nil {
		return nil, []string{fmt.Sprintf("%v; the MCP servers of %s are off", err, path)}
	}
	if prev == nil || prev.Digest != r.Digest {
		why := "is not approved"
		if prev != nil {
			why = "changed since you approved it"
		}
		if consent == nil {
			return nil, []string{fmt.Sprintf("%s %s: its %d MCP server(s) (%s) were not started. Run `yolop mcp approve` in this workspace to review and approve them, or pass --yes",
				path, why, len(r.Servers), serverNames(r))}
		}
		ok, err := consent(ctx, r, prev)
		if err != nil {
			return nil, []string{fmt.Sprintf("%s %s and could not be asked about (%v); its MCP servers were not started", path, why, err)}
		}
		if !ok {
			return nil, []string{fmt.Sprintf("%s: not approved; its MCP servers were not started", path)}
		}
		if err := approvals.Approve(ctx, workspace, r); err != nil {
			return nil, []string{fmt.Sprintf("%v; the MCP servers of %s were not started", err, path)}
		}
	}
	return loadBytes(path, b, lookup)
}

func serverNames(r *Review) string {
	names := make([]string, len(r.Servers))
	for i, s := range r.Servers {
		names[i] = clean(s.Name)
	}
	return strings.Join(names, ", ")
}

// ForApprovedWorkspace returns a client over the approved servers of
// workspace's .mcp.json (see [LoadApproved]), expanded with the host
// environment, with the file's warnings, and the rest of o.
func ForApprovedWorkspace(ctx context.Context, workspace string, approvals *Approvals, consent Consent, o Options) *Client {
	servers, warns := LoadApproved(ctx, workspace, approvals, consent, nil)
	o.Servers = append(servers, o.Servers...)
	o.Warnings = append(warns, o.Warnings...)
	return New(o)
}
