package settings

import (
	"context"
	"fmt"
	"slices"
	"sort"
)

// --- the on_error of plugins' hooks ([hooks]) ---

// HookPolicyKey is the [hooks] table: the user's on_error for the hooks of
// plugins loaded through the declarative path (Claude Code plugins), for
// all of them and per plugin:
//
//	[hooks]
//	on_error = "block"            # or "allow"; absent: block for blocking events
//	[hooks.plugins.my-guard]
//	on_error = "allow"            # wins over [hooks] on_error for that plugin
//
// Only the user's settings.toml sets it; a plugin's own files never do.
const HookPolicyKey = "hooks"

// The values of on_error in [hooks].
const (
	// HookBlock fails a blocking event's hook closed when it times out,
	// crashes or answers garbage.
	HookBlock = "block"
	// HookAllow lets the call, message or turn through (with a warning).
	HookAllow = "allow"
)

// A HookPolicy is the [hooks] table.
type HookPolicy struct {
	// OnError is [hooks] on_error: HookBlock, HookAllow or "" (unset).
	OnError string
	// Plugins maps a plugin's name to its [hooks.plugins.<name>] on_error.
	Plugins map[string]string
}

// For returns the on_error the user set for a plugin's hooks: its own
// entry, else the table's, else "" (the default of each event).
func (p HookPolicy) For(plugin string) string {
	if v, ok := p.Plugins[plugin]; ok {
		return v
	}
	return p.OnError
}

// HookPolicy returns the [hooks] table. A malformed one is an error naming
// the file and the key.
func (f *File) HookPolicy(ctx context.Context) (HookPolicy, error) {
	var p HookPolicy
	err := f.read(ctx, func(d *doc) error {
		if !d.k.Exists(HookPolicyKey) {
			return nil
		}
		table, ok := d.k.Get(HookPolicyKey).(map[string]any)
		if !ok {
			return fmt.Errorf("%w %s: hooks must be a table such as\n\n[hooks]\non_error = \"block\"\n\nfound %v", ErrMalformed, f.path, tomlValue(d.k.Get(HookPolicyKey)))
		}
		for _, k := range sortedKeys(table) {
			switch k {
			case "on_error":
				v, err := f.onError("hooks.on_error", table[k])
				if err != nil {
					return err
				}
				p.OnError = v
			case "plugins":
				plugins, ok := table[k].(map[string]any)
				if !ok {
					return fmt.Errorf("%w %s: hooks.plugins must be a table of plugins, such as [hooks.plugins.my-guard], found %v", ErrMalformed, f.path, tomlValue(table[k]))
				}
				for _, name := range sortedKeys(plugins) {
					key := "hooks.plugins." + name
					entry, ok := plugins[name].(map[string]any)
					if !ok {
						return fmt.Errorf("%w %s: %s must be a table with on_error, found %v", ErrMalformed, f.path, key, tomlValue(plugins[name]))
					}
					for _, ek := range sortedKeys(entry) {
						if ek != "on_error" {
							return fmt.Errorf("%w %s: %s.%s is not a key of %s; its one key is on_error", ErrMalformed, f.path, key, ek, key)
						}
						v, err := f.onError(key+".on_error", entry[ek])
						if err != nil {
							return err
						}
						if p.Plugins == nil {
							p.Plugins = map[string]string{}
						}
						p.Plugins[name] = v
					}
				}
			default:
				return fmt.Errorf("%w %s: hooks.%s is not a [hooks] key; the keys are on_error and plugins", ErrMalformed, f.path, k)
			}
		}
		return nil
	})
	return p, err
}

func (f *File) onError(key string, v any) (string, error) {
	s, _ := v.(string)
	if !slices.Contains([]string{HookBlock, HookAllow}, s) {
		return "", fmt.Errorf("%w %s: %s must be \"block\" or \"allow\", found %v", ErrMalformed, f.path, key, tomlValue(v))
	}
	return s, nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
