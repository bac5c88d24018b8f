// Package settings reads and writes yolop's settings.toml, the harness
// configuration that says which capabilities a session runs.
//
// An enabled extension is one harness entry (spec D5):
//
//	[[capabilities]]
//	ref = "ext:echo"
//	config = { greeting = "hi" }   # optional capability config
//
// The file is read and written through koanf (TOML parser, file
// provider). Every key this package does not manage — other top-level keys,
// other entries such as ref = "builtin:fs", unknown keys inside an entry —
// survives a write with its meaning intact (comments and layout do not: the
// file is re-encoded). A malformed file is an error that names the file and
// the line, and nothing is written. Writes take an exclusive gofrs/flock
// lock on .settings.lock beside the file and replace the file atomically
// (temporary file, fsync, rename), so concurrent writers from several
// processes serialise and a crash leaves the old or the new file whole.
// A settings.toml that is a symbolic link stays one: the file it points
// to is replaced, in its own directory.
package settings

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofrs/flock"
	"github.com/knadh/koanf/parsers/toml/v2"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"
	gotoml "github.com/pelletier/go-toml/v2"
	"yolop.dev/internal/atomicfile"
)

const (
	// FileName is the settings file inside the config directory.
	FileName = "settings.toml"
	// LockName is the file lock serialising writers.
	LockName = ".settings.lock"
	// ExtPrefix starts the capability ref of an extension.
	ExtPrefix = "ext:"
	// capabilitiesKey is the harness list.
	capabilitiesKey = "capabilities"
)

// delim is koanf's key-path delimiter. A TOML key may contain "." when
// quoted ("a.b" = 1); splitting on it would rewrite such a key as a table,
// so paths use a byte no settings key will hold.
const delim = "\x1f"

// ErrMalformed is wrapped by every error about the content of settings.toml.
var ErrMalformed = errors.New("malformed settings file")

// A File is settings.toml in one config directory. Its methods are safe for
// concurrent use by goroutines and processes.
type File struct {
	path     string
	lockPath string
	poll     time.Duration
}

// New returns the settings file in configDir (created on the first write).
func New(configDir string) *File {
	return &File{
		path:     filepath.Join(configDir, FileName),
		lockPath: filepath.Join(configDir, LockName),
		poll:     10 * time.Millisecond,
	}
}

// Path is the settings.toml path.
func (f *File) Path() string { return f.path }

// An Entry is one [[capabilities]] entry naming an extension.
type Entry struct {
	// Name is the extension name (ref "ext:<name>").
	Name string
	// Enabled is false when the entry says enabled = false (kept so its
	// config survives a disable).
	Enabled bool
	// Config is the entry's config table, or nil.
	Config map[string]any
}

// Extensions returns the extension entries in harness order.
func (f *File) Extensions(ctx context.Context) ([]Entry, error) {
	var out []Entry
	err := f.read(ctx, func(d *doc) error {
		for _, c := range d.caps {
			if name, ok := extName(c); ok {
				out = append(out, entryOf(name, c))
			}
		}
		return nil
	})
	return out, err
}

// Enabled returns the names of the enabled extensions in harness order.
func (f *File) Enabled(ctx context.Context) ([]string, error) {
	ents, err := f.Extensions(ctx)
	var names []string
	for _, e := range ents {
		if e.Enabled {
			names = append(names, e.Name)
		}
	}
	return names, err
}

// Entry returns the entry of one extension and whether there is one.
func (f *File) Entry(ctx context.Context, name string) (Entry, bool, error) {
	ents, err := f.Extensions(ctx)
	if err != nil {
		return Entry{}, false, err
	}
	for _, e := range ents {
		if e.Name == name {
			return e, true, nil
		}
	}
	return Entry{}, false, nil
}

// Enable adds [[capabilities]] ref = "ext:<name>" (or clears enabled =
// false on an existing entry). It reports whether anything changed.
func (f *File) Enable(ctx context.Context, name string) (changed bool, err error) {
	err = f.update(ctx, func(d *doc) error {
		if i := d.find(name); i >= 0 {
			if _, off := d.caps[i]["enabled"]; off {
				delete(d.caps[i], "enabled")
				changed = true
			}
			return nil
		}
		d.caps = append(d.caps, map[string]any{"ref": ExtPrefix + name})
		changed = true
		return nil
	})
	return changed, err
}

// Disable turns an extension off. An entry holding nothing but its ref is
// removed; one that carries config or other keys stays with enabled =
// false, so enabling it again restores its config. It reports whether
// anything changed.
func (f *File) Disable(ctx context.Context, name string) (changed bool, err error) {
	err = f.update(ctx, func(d *doc) error {
		i := d.find(name)
		if i < 0 {
			return nil
		}
		c := d.caps[i]
		if en, ok := c["enabled"].(bool); ok && !en {
			return nil
		}
		changed = true
		if onlyRef(c) {
			d.caps = slices.Delete(d.caps, i, i+1)
			return nil
		}
		c["enabled"] = false
		return nil
	})
	return changed, err
}

// Remove deletes an extension's entry, config included. It reports whether
// there was one.
func (f *File) Remove(ctx context.Context, name string) (removed bool, err error) {
	err = f.update(ctx, func(d *doc) error {
		if i := d.find(name); i >= 0 {
			d.caps = slices.Delete(d.caps, i, i+1)
			removed = true
		}
		return nil
	})
	return removed, err
}

// RegistryKey is the settings key naming the default sparse registry for
// crate sources: `[extensions] registry = "sparse+https://…/"`.
const RegistryKey = "extensions" + delim + "registry"

// Registry returns the default sparse registry for crate sources, or ""
// when settings.toml names none (crates.io).
func (f *File) Registry(ctx context.Context) (string, error) {
	var reg string
	err := f.read(ctx, func(d *doc) error {
		if !d.k.Exists(RegistryKey) {
			return nil
		}
		v, ok := d.k.Get(RegistryKey).(string)
		if !ok || v == "" {
			return fmt.Errorf("%w %s: extensions.registry must be a string such as \"sparse+https://index.example/\"", ErrMalformed, f.path)
		}
		reg = v
		return nil
	})
	return reg, err
}

// The registry transfer limits, in the [registry] table:
//
//	[registry]
//	low_speed_limit = 10        # bytes per second; 0 turns the check off
//	low_speed_time = "30s"      # the window the rate is averaged over
//	download_timeout = "10m"    # one download, all retries included; "0" = no bound
//	retries = 3                 # retries of a failed request (cargo's net.retry); 0 = none
const (
	LowSpeedLimitKey   = "registry" + delim + "low_speed_limit"
	LowSpeedTimeKey    = "registry" + delim + "low_speed_time"
	DownloadTimeoutKey = "registry" + delim + "download_timeout"
	RetriesKey         = "registry" + delim + "retries"
)

// DownloadLimits are the registry transfer limits settings.toml sets; a
// nil field is not set (the built-in default applies).
type DownloadLimits struct {
	// LowSpeedLimit is in bytes per second; 0 turns the low-speed check off.
	LowSpeedLimit *int64
	// LowSpeedTime is the window the rate is averaged over; 0 turns the
	// low-speed check off.
	LowSpeedTime *time.Duration
	// DownloadTimeout bounds one download, retries included; 0 means no
	// bound.
	DownloadTimeout *time.Duration
	// Retries is how many times a failed request is retried; 0 means
	// none.
	Retries *int
}

// DownloadLimits returns the [registry] transfer limits. A value of the
// wrong type or a negative one is an error naming the file and the key.
// Durations are strings in Go's syntax ("30s", "5m", "1h30m") or a whole
// number of seconds.
func (f *File) DownloadLimits(ctx context.Context) (DownloadLimits, error) {
	var l DownloadLimits
	err := f.read(ctx, func(d *doc) error {
		if d.k.Exists(LowSpeedLimitKey) {
			n, ok := d.k.Get(LowSpeedLimitKey).(int64)
			if !ok || n < 0 {
				return fmt.Errorf("%w %s: registry.low_speed_limit must be a whole number of bytes per second such as 10 (0 turns the check off), found %v", ErrMalformed, f.path, d.k.Get(LowSpeedLimitKey))
			}
			l.LowSpeedLimit = &n
		}
		if d.k.Exists(RetriesKey) {
			n, ok := d.k.Get(RetriesKey).(int64)
			if !ok || n < 0 || n > 100 {
				return fmt.Errorf("%w %s: registry.retries must be a whole number of retries from 0 to 100 such as 3, found %v", ErrMalformed, f.path, d.k.Get(RetriesKey))
			}
			r := int(n)
			l.Retries = &r
		}
		for _, k := range []struct {
			key, name, example string
			dst                **time.Duration
		}{
			{LowSpeedTimeKey, "registry.low_speed_time", `"30s"`, &l.LowSpeedTime},
			{DownloadTimeoutKey, "registry.download_timeout", `"10m"`, &l.DownloadTimeout},
		} {
			if !d.k.Exists(k.key) {
				continue
			}
			v, err := duration(d.k.Get(k.key))
			if err != nil {
				return fmt.Errorf("%w %s: %s must be a duration such as %s or a number of seconds (0 turns it off): %v", ErrMalformed, f.path, k.name, k.example, err)
			}
			*k.dst = &v
		}
		return nil
	})
	return l, err
}

// ToolTimeoutKey is the session's limit on one tool call, in the
// [session] table:
//
//	[session]
//	tool_timeout = "5m"   # a call runs for min(this, the tool's timeout_ms)
const ToolTimeoutKey = "session" + delim + "tool_timeout"

// ToolTimeout returns [session] tool_timeout, or 0 when it is not set (the
// tool's own timeout_ms applies, else 10 minutes). A malformed or zero value
// is an error naming the file and the key.
func (f *File) ToolTimeout(ctx context.Context) (time.Duration, error) {
	var t time.Duration
	err := f.read(ctx, func(d *doc) error {
		if !d.k.Exists(ToolTimeoutKey) {
			return nil
		}
		v, err := duration(d.k.Get(ToolTimeoutKey))
		if err == nil && v == 0 {
			err = errors.New("found 0; a tool call needs some time (remove the key for the default)")
		}
		if err != nil {
			return fmt.Errorf("%w %s: session.tool_timeout must be a duration such as \"5m\" or a number of seconds: %v", ErrMalformed, f.path, err)
		}
		t = v
		return nil
	})
	return t, err
}

// duration reads a settings duration: a Go duration string or a whole
// number of seconds, not negative.
func duration(v any) (time.Duration, error) {
	var d time.Duration
	switch x := v.(type) {
	case string:
		var err error
		if d, err = time.ParseDuration(x); err != nil {
			return 0, fmt.Errorf("found %q", x)
		}
	case int64:
		if x > int64(1<<63-1)/int64(time.Second) {
			return 0, fmt.Errorf("found %d, too large", x)
		}
		d = time.Duration(x) * time.Second
	default:
		return 0, fmt.Errorf("found %v (%T)", v, v)
	}
	if d < 0 {
		return 0, fmt.Errorf("found %s, which is negative", d)
	}
	return d, nil
}

// CapabilityConfig returns the config table of an extension's entry, or
// nil when it has none.
func (f *File) CapabilityConfig(ctx context.Context, name string) (map[string]any, error) {
	e, _, err := f.Entry(ctx, name)
	return e.Config, err
}

// SetCapabilityConfig replaces the config table of an extension's entry; a
// nil or empty cfg removes it. Without an entry, one is created with
// enabled = false: configuring an extension does not enable it.
func (f *File) SetCapabilityConfig(ctx context.Context, name string, cfg map[string]any) error {
	return f.UpdateCapabilityConfig(ctx, name, func(map[string]any) (map[string]any, error) { return cfg, nil })
}

// UpdateCapabilityConfig reads the config table of an extension's entry
// (nil when it has none), passes it to fn and stores what fn returns as
// [File.SetCapabilityConfig] does, all under one exclusive lock: a
// concurrent writer, in this process or another, cannot slip in between
// the read and the write, so no update is lost. fn may modify and return
// the map it is given. When fn fails, nothing is written and its error is
// returned as it is.
func (f *File) UpdateCapabilityConfig(ctx context.Context, name string, fn func(cfg map[string]any) (map[string]any, error)) error {
	return f.update(ctx, func(d *doc) error {
		i := d.find(name)
		var cur map[string]any
		if i >= 0 {
			cur = entryOf(name, d.caps[i]).Config
		}
		cfg, err := fn(cur)
		if err != nil {
			return err
		}
		if i < 0 {
			if len(cfg) == 0 {
				return nil
			}
			d.caps = append(d.caps, map[string]any{"ref": ExtPrefix + name, "enabled": false})
			i = len(d.caps) - 1
		}
		if len(cfg) == 0 {
			delete(d.caps[i], "config")
		} else {
			d.caps[i]["config"] = cfg
		}
		if onlyRefAndDisabled(d.caps[i]) {
			d.caps = slices.Delete(d.caps, i, i+1)
		}
		return nil
	})
}

// doc is the parsed file: the koanf instance holding everything, and the
// capabilities list pulled out of it for editing.
type doc struct {
	k    *koanf.Koanf
	caps []map[string]any
	// hadCaps records that the file had a capabilities key, so an emptied
	// list is written back as capabilities = [] rather than dropped.
	hadCaps bool
}

func (d *doc) find(name string) int {
	for i, c := range d.caps {
		if n, ok := extName(c); ok && n == name {
			return i
		}
	}
	return -1
}

func extName(c map[string]any) (string, bool) {
	ref, _ := c["ref"].(string)
	name, ok := strings.CutPrefix(ref, ExtPrefix)
	return name, ok && name != ""
}

func entryOf(name string, c map[string]any) Entry {
	e := Entry{Name: name, Enabled: true}
	if en, ok := c["enabled"].(bool); ok {
		e.Enabled = en
	}
	if cfg, ok := c["config"].(map[string]any); ok {
		e.Config = cfg
	}
	return e
}

func onlyRef(c map[string]any) bool {
	for k := range c {
		if k != "ref" && k != "enabled" {
			return false
		}
	}
	return true
}

func onlyRefAndDisabled(c map[string]any) bool {
	en, ok := c["enabled"].(bool)
	return ok && !en && onlyRef(c)
}

// load parses the file; a missing file is empty settings.
func (f *File) load() (*doc, error) {
	k := koanf.NewWithConf(koanf.Conf{Delim: delim})
	d := &doc{k: k}
	if _, err := os.Stat(f.path); errors.Is(err, fs.ErrNotExist) {
		return d, nil
	}
	if err := k.Load(file.Provider(f.path), toml.Parser()); err != nil {
		return nil, f.syntaxError(err)
	}
	raw, present := k.Get(capabilitiesKey), k.Exists(capabilitiesKey)
	d.hadCaps = present
	if !present {
		return d, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("%w %s: %q must be an array of tables ([[capabilities]]), found %T; fix the file by hand", ErrMalformed, f.path, capabilitiesKey, raw)
	}
	for i, item := range list {
		c, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w %s: capabilities[%d] must be a table, found %T; fix the file by hand", ErrMalformed, f.path, i, item)
		}
		if _, ok := c["ref"].(string); !ok {
			return nil, fmt.Errorf("%w %s: capabilities[%d] has no string ref (e.g. ref = \"ext:<name>\"); fix the file by hand", ErrMalformed, f.path, i)
		}
		if name, ok := extName(c); ok {
			if v, ok := c["enabled"]; ok {
				if _, isBool := v.(bool); !isBool {
					return nil, fmt.Errorf("%w %s: capabilities[%d] (ext:%s): enabled must be true or false, found %T", ErrMalformed, f.path, i, name, v)
				}
			}
			if v, ok := c["config"]; ok {
				if _, isMap := v.(map[string]any); !isMap {
					return nil, fmt.Errorf("%w %s: capabilities[%d] (ext:%s): config must be a table, found %T", ErrMalformed, f.path, i, name, v)
				}
			}
			if slices.ContainsFunc(d.caps, func(o map[string]any) bool { n, _ := extName(o); return n == name }) {
				return nil, fmt.Errorf("%w %s: ext:%s appears in more than one [[capabilities]] entry; keep one", ErrMalformed, f.path, name)
			}
		}
		d.caps = append(d.caps, c)
	}
	return d, nil
}

// syntaxError names the file, line and column of a TOML error.
func (f *File) syntaxError(err error) error {
	var de *gotoml.DecodeError
	if errors.As(err, &de) {
		line, col := de.Position()
		return fmt.Errorf("%w %s:%d:%d: %s; fix the file by hand (nothing was changed)", ErrMalformed, f.path, line, col, de.Error())
	}
	var se *gotoml.StrictMissingError
	if errors.As(err, &se) {
		return fmt.Errorf("%w %s: %s", ErrMalformed, f.path, se.Error())
	}
	return fmt.Errorf("%w %s: %w; fix the file by hand (nothing was changed)", ErrMalformed, f.path, err)
}

func (f *File) lock(ctx context.Context, exclusive bool) (*flock.Flock, error) {
	if err := os.MkdirAll(filepath.Dir(f.lockPath), 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", filepath.Dir(f.lockPath), err)
	}
	fl := flock.New(f.lockPath)
	var ok bool
	var err error
	if exclusive {
		ok, err = fl.TryLockContext(ctx, f.poll)
	} else {
		ok, err = fl.TryRLockContext(ctx, f.poll)
	}
	if err == nil && !ok {
		err = ctx.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("waiting for the settings lock %s (another yolop is writing settings?): %w", f.lockPath, err)
	}
	return fl, nil
}

// read runs fn on the parsed file under the shared lock. A missing config
// directory is empty settings and is not created.
func (f *File) read(ctx context.Context, fn func(*doc) error) error {
	// No file yet (and perhaps no directory): nothing to read and nothing
	// to lock, so a look leaves no lock file behind. A writer replaces the
	// file whole, so a reader that raced it still sees a whole file.
	if _, err := os.Lstat(f.path); errors.Is(err, fs.ErrNotExist) {
		return fn(&doc{k: koanf.NewWithConf(koanf.Conf{Delim: delim})})
	}
	fl, err := f.lock(ctx, false)
	if err != nil {
		return err
	}
	defer fl.Unlock()
	d, err := f.load()
	if err != nil {
		return err
	}
	return fn(d)
}

// update parses the file under the exclusive lock, lets fn edit the
// capabilities list, and writes the result atomically. Nothing is written
// when the file is malformed or fn fails.
func (f *File) update(ctx context.Context, fn func(*doc) error) error {
	fl, err := f.lock(ctx, true)
	if err != nil {
		return err
	}
	defer fl.Unlock()
	d, err := f.load()
	if err != nil {
		return err
	}
	before := len(d.caps)
	if err := fn(d); err != nil {
		return err
	}
	list := make([]any, len(d.caps))
	for i, c := range d.caps {
		list[i] = c
	}
	raw := d.k.Raw()
	if len(list) > 0 || d.hadCaps || before > 0 {
		raw[capabilitiesKey] = list
	}
	out, err := toml.Parser().Marshal(raw)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", f.path, err)
	}
	// A settings.toml that is a symlink (a dotfiles checkout) stays one:
	// the file it points to is replaced.
	dst, err := atomicfile.FollowLinks(f.path)
	if err != nil {
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	return atomicfile.Write(dst, out, atomicfile.KeepMode)
}

// MCPNeverDeferKey lists the MCP tools whose schemas are always loaded:
//
//	[mcp]
//	never_defer = ["mcp__github__*"]   # path.Match globs on session tool names
const MCPNeverDeferKey = "mcp" + delim + "never_defer"

// MCPNeverDefer returns [mcp] never_defer: globs of MCP tool names the
// session loads instead of deferring them behind tool_search. Unset means
// none (every MCP tool is deferred).
func (f *File) MCPNeverDefer(ctx context.Context) ([]string, error) {
	return f.stringList(ctx, MCPNeverDeferKey, "mcp.never_defer must be a list of tool-name globs such as [\"mcp__github__*\"]", func(s string) error {
		if _, err := path.Match(s, ""); err != nil {
			return fmt.Errorf("%w %s: mcp.never_defer glob %q: %v", ErrMalformed, f.path, s, err)
		}
		return nil
	})
}

// stringList reads key as a list of strings, each passing check (which
// returns the error to give, or nil). Unset means none; a value that is
// not a list of strings is ErrMalformed with want, naming the file.
func (f *File) stringList(ctx context.Context, key, want string, check func(string) error) ([]string, error) {
	var out []string
	err := f.read(ctx, func(d *doc) error {
		if !d.k.Exists(key) {
			return nil
		}
		bad := fmt.Errorf("%w %s: %s", ErrMalformed, f.path, want)
		list, ok := d.k.Get(key).([]any)
		if !ok {
			return bad
		}
		for _, v := range list {
			s, ok := v.(string)
			if !ok {
				return bad
			}
			if err := check(s); err != nil {
				return err
			}
			out = append(out, s)
		}
		return nil
	})
	return out, err
}

// ModelKey is the table naming the model the agent asks:
//
//	[model]
//	provider = "openai"                       # "openai" (any OpenAI-compatible server) or "anthropic"
//	model = "llama3.2"                        # as the provider names it
//	base_url = "http://localhost:11434/v1"    # optional: the API's base URL
//	context_window = 128000                   # optional: the model's window, in tokens
//	max_tokens = 8192                         # optional: the cap on one reply, in tokens
//
// Without provider, model is a reference "<provider>/<model>" such as
// "openai/gpt-4.1".
const ModelKey = "model"

// modelKeys are the keys [model] may hold.
var modelKeys = []string{"provider", "model", "base_url", "context_window", "max_tokens"}

// A Model is the [model] table. A field the table does not set is zero.
type Model struct {
	// Provider is "openai", "anthropic" or what the file says; the
	// harness checks the name. Empty: Model is a "<provider>/<model>"
	// reference.
	Provider string
	// Model is the model as the provider names it, or a reference.
	Model string
	// BaseURL is an http or https URL.
	BaseURL string
	// ContextWindow and MaxTokens are in tokens; zero is not set.
	ContextWindow, MaxTokens int
}

// Model returns the [model] table and whether settings.toml has one. A key
// of the wrong type, an empty name, a base URL that is not http(s), a
// window or reply cap that is not a positive whole number (or a reply cap
// that leaves no room in the window) and a key the table does not know
// are errors naming the file and the key.
func (f *File) Model(ctx context.Context) (Model, bool, error) {
	var m Model
	var present bool
	err := f.read(ctx, func(d *doc) error {
		if !d.k.Exists(ModelKey) {
			return nil
		}
		present = true
		table, ok := d.k.Get(ModelKey).(map[string]any)
		if !ok {
			return fmt.Errorf("%w %s: model must be a table such as\n\n[model]\nprovider = \"openai\"\nmodel = \"gpt-4.1\"\n\nfound %v", ErrMalformed, f.path, d.k.Get(ModelKey))
		}
		for k := range table {
			if !slices.Contains(modelKeys, k) {
				return fmt.Errorf("%w %s: model.%s is not a [model] key; the keys are %s", ErrMalformed, f.path, k, strings.Join(modelKeys, ", "))
			}
		}
		str := func(key, example string) (string, error) {
			v, ok := table[key]
			if !ok {
				return "", nil
			}
			s, isStr := v.(string)
			if !isStr || strings.TrimSpace(s) == "" {
				return "", fmt.Errorf("%w %s: model.%s must be a non-empty string such as %s, found %v", ErrMalformed, f.path, key, example, v)
			}
			return strings.TrimSpace(s), nil
		}
		num := func(key, example string) (int, error) {
			v, ok := table[key]
			if !ok {
				return 0, nil
			}
			n, isInt := v.(int64)
			if !isInt || n <= 0 || n > 100_000_000 {
				return 0, fmt.Errorf("%w %s: model.%s must be a positive whole number of tokens such as %s, found %v", ErrMalformed, f.path, key, example, v)
			}
			return int(n), nil
		}
		var err error
		if m.Provider, err = str("provider", `"openai" or "anthropic"`); err != nil {
			return err
		}
		if m.Model, err = str("model", `"gpt-4.1"`); err != nil {
			return err
		}
		if m.BaseURL, err = str("base_url", `"http://localhost:11434/v1"`); err != nil {
			return err
		}
		if m.BaseURL != "" {
			u, perr := url.Parse(m.BaseURL)
			if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("%w %s: model.base_url must be an http or https URL such as \"http://localhost:11434/v1\", found %q", ErrMalformed, f.path, m.BaseURL)
			}
		}
		if m.ContextWindow, err = num("context_window", "128000"); err != nil {
			return err
		}
		if m.MaxTokens, err = num("max_tokens", "8192"); err != nil {
			return err
		}
		if m.ContextWindow > 0 && m.MaxTokens >= m.ContextWindow {
			return fmt.Errorf("%w %s: model.max_tokens (%d) must be less than model.context_window (%d): a reply's tokens come out of the window", ErrMalformed, f.path, m.MaxTokens, m.ContextWindow)
		}
		return nil
	})
	if err != nil {
		return Model{}, false, err
	}
	return m, present, nil
}

// ApprovalKey is the table holding the user's approval policy: which tool
// calls to ask about, or refuse, beyond what the tools' manifests declare.
//
//	[approval]
//	risk = "high"            # ask before a call of any tool whose declared risk is at least this
//	[approval.extensions]
//	echo = "ask"             # every tool of extension echo: "allow", "ask" or "deny"
//	[approval.tools]
//	"echo.reverse" = "deny"  # one tool: "<ext>.<tool>", or a built-in or MCP tool by its session name ("bash")
//
// A policy can only tighten: "allow" never lifts a manifest's approval =
// "always".
const ApprovalKey = "approval"

// The rules of an [approval] entry, loosest to tightest; the same strings
// as core/host's RuleAllow, RuleAsk and RuleDeny.
const (
	RuleAllow = "allow"
	RuleAsk   = "ask"
	RuleDeny  = "deny"
)

// Risks are a tool's declared risk levels, lowest first.
var Risks = []string{"low", "medium", "high"}

var (
	approvalKeys = []string{"risk", "extensions", "tools"}
	rules        = []string{RuleAllow, RuleAsk, RuleDeny}
)

// Approval is the [approval] table. The zero value is no policy.
type Approval struct {
	// Risk asks before every call of a tool whose declared risk is at
	// least this ("low", "medium" or "high"); "" sets no risk rule. A tool
	// that declares no risk is not covered.
	Risk string
	// Extensions maps an extension name to the rule for all its tools.
	Extensions map[string]string
	// Tools maps one tool to its rule: an extension's tool as
	// "<ext>.<tool>" (the manifest's tool name), any other tool (built-in,
	// MCP) by its session-wide name.
	Tools map[string]string
}

// IsZero reports whether the table sets nothing.
func (a Approval) IsZero() bool {
	return a.Risk == "" && len(a.Extensions) == 0 && len(a.Tools) == 0
}

// Rule is the user's rule for one tool: the tightest (deny, then ask, then
// allow) of its [approval.tools] entry, its extension's
// [approval.extensions] entry and, when its declared risk reaches
// [approval] risk, ask; "" when no entry covers it. ext is the tool's
// extension ("" for a built-in or MCP tool), tool its own (manifest) name,
// session its session-wide name and risk its declared risk ("" for none).
func (a Approval) Rule(ext, tool, session, risk string) string {
	rule := ""
	tighten := func(r string) {
		if slices.Index(rules, r) > slices.Index(rules, rule) {
			rule = r
		}
	}
	if ext != "" {
		tighten(a.Tools[ext+"."+tool])
		tighten(a.Extensions[ext])
	} else {
		tighten(a.Tools[session])
	}
	if a.Risk != "" && risk != "" && slices.Index(Risks, risk) >= slices.Index(Risks, a.Risk) {
		tighten(RuleAsk)
	}
	return rule
}

// Approval returns the [approval] table (the zero Approval when there is
// none). A key the table does not know, a rule that is not "allow", "ask"
// or "deny" and a risk that is not "low", "medium" or "high" are errors
// naming the file, the key and the allowed values.
func (f *File) Approval(ctx context.Context) (Approval, error) {
	var a Approval
	err := f.read(ctx, func(d *doc) error {
		if !d.k.Exists(ApprovalKey) {
			return nil
		}
		table, ok := d.k.Get(ApprovalKey).(map[string]any)
		if !ok {
			return fmt.Errorf("%w %s: approval must be a table such as\n\n[approval]\nrisk = \"high\"\n[approval.tools]\n\"echo.reverse\" = \"ask\"\n\nfound %v", ErrMalformed, f.path, d.k.Get(ApprovalKey))
		}
		for k := range table {
			if !slices.Contains(approvalKeys, k) {
				return fmt.Errorf("%w %s: approval.%s is not an [approval] key; the keys are %s", ErrMalformed, f.path, k, strings.Join(approvalKeys, ", "))
			}
		}
		if v, ok := table["risk"]; ok {
			s, _ := v.(string)
			if !slices.Contains(Risks, s) {
				return fmt.Errorf("%w %s: approval.risk must be one of %s (ask before a call of any tool whose declared risk is at least that), found %v", ErrMalformed, f.path, quoted(Risks), tomlValue(v))
			}
			a.Risk = s
		}
		var err error
		if a.Extensions, err = f.ruleTable(table, "extensions", `echo = "ask"`); err != nil {
			return err
		}
		a.Tools, err = f.ruleTable(table, "tools", `"echo.reverse" = "deny"`)
		return err
	})
	if err != nil {
		return Approval{}, err
	}
	return a, nil
}

// ruleTable reads [approval.<key>]: names to rules.
func (f *File) ruleTable(table map[string]any, key, example string) (map[string]string, error) {
	v, ok := table[key]
	if !ok {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w %s: approval.%s must be a table such as\n\n[approval.%s]\n%s\n\nfound %v", ErrMalformed, f.path, key, key, example, tomlValue(v))
	}
	out := make(map[string]string, len(m))
	for name, r := range m {
		s, _ := r.(string)
		if !slices.Contains(rules, s) {
			return nil, fmt.Errorf("%w %s: approval.%s.%q must be one of %s, found %v", ErrMalformed, f.path, key, name, quoted(rules), tomlValue(r))
		}
		if strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("%w %s: approval.%s has an empty name; name an extension or a tool", ErrMalformed, f.path, key)
		}
		out[name] = s
	}
	return out, nil
}

// quoted lists values as "a", "b" or "c".
func quoted(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// tomlValue shows a found value as the file spells it.
func tomlValue(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	if _, ok := v.(map[string]any); ok {
		return "a table"
	}
	return fmt.Sprint(v)
}

// --- the update cooldown (harness/firstseen) ---

// UpdateCooldownKey is how long an update waits after yolop first saw a
// version or commit before installing it, in the [update] table:
//
//	[update]
//	cooldown = "48h"   # a Go duration, or "0" (0) to turn the wait off
const UpdateCooldownKey = "update" + delim + "cooldown"

// UpdateCooldown returns [update] cooldown, or def when it is not set. A
// malformed value is an error naming the file and the key.
func (f *File) UpdateCooldown(ctx context.Context, def time.Duration) (time.Duration, error) {
	d := def
	err := f.read(ctx, func(doc *doc) error {
		if !doc.k.Exists(UpdateCooldownKey) {
			return nil
		}
		v, err := duration(doc.k.Get(UpdateCooldownKey))
		if err != nil {
			return fmt.Errorf("%w %s: update.cooldown must be a duration such as \"48h\" or \"0\" to turn the wait off: %v", ErrMalformed, f.path, err)
		}
		d = v
		return nil
	})
	return d, err
}
