package settings

import (
	"context"
	"fmt"
	"slices"
)

// marketplacesKey is the list of Claude Code marketplaces the user added:
//
//	[[marketplaces]]
//	name = "claude-code-plugins"
//	source = "https://github.com/anthropics/claude-code"   # a git URL or a directory
//	ref = "main"                                           # optional: the branch or tag asked for
//	commit = "5cfc0a19…"                                   # git: the commit the catalog was read at
const marketplacesKey = "marketplaces"

// A Marketplace is one [[marketplaces]] entry: a plugin catalog the user
// added with `yolop ext marketplace add`.
type Marketplace struct {
	// Name is the catalog's name, the <marketplace> of <plugin>@<marketplace>.
	Name string
	// Source is a git URL or an absolute directory.
	Source string
	// Ref is the git branch or tag asked for; empty means the remote's HEAD.
	Ref string
	// Commit is the full commit the catalog was read at (git only); its
	// plugins install from that commit.
	Commit string
}

// Marketplaces returns the [[marketplaces]] entries in file order.
func (f *File) Marketplaces(ctx context.Context) ([]Marketplace, error) {
	var out []Marketplace
	err := f.read(ctx, func(d *doc) error {
		var err error
		out, err = f.marketplaces(d)
		return err
	})
	return out, err
}

// PutMarketplace adds m, or replaces the entry with its name.
func (f *File) PutMarketplace(ctx context.Context, m Marketplace) error {
	return f.update(ctx, func(d *doc) error {
		list, err := f.marketplaces(d)
		if err != nil {
			return err
		}
		if i := slices.IndexFunc(list, func(o Marketplace) bool { return o.Name == m.Name }); i >= 0 {
			list[i] = m
		} else {
			list = append(list, m)
		}
		return setMarketplaces(d, list)
	})
}

// RemoveMarketplace deletes the entry named name, reporting whether there
// was one.
func (f *File) RemoveMarketplace(ctx context.Context, name string) (bool, error) {
	removed := false
	err := f.update(ctx, func(d *doc) error {
		list, err := f.marketplaces(d)
		if err != nil {
			return err
		}
		n := len(list)
		list = slices.DeleteFunc(list, func(o Marketplace) bool { return o.Name == name })
		if removed = len(list) != n; removed {
			return setMarketplaces(d, list)
		}
		return nil
	})
	return removed, err
}

func (f *File) marketplaces(d *doc) ([]Marketplace, error) {
	if !d.k.Exists(marketplacesKey) {
		return nil, nil
	}
	list, ok := d.k.Get(marketplacesKey).([]any)
	if !ok {
		return nil, fmt.Errorf("%w %s: %q must be an array of tables ([[marketplaces]]); fix the file by hand", ErrMalformed, f.path, marketplacesKey)
	}
	var out []Marketplace
	for i, item := range list {
		t, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w %s: marketplaces[%d] must be a table; fix the file by hand", ErrMalformed, f.path, i)
		}
		var m Marketplace
		for key, dst := range map[string]*string{"name": &m.Name, "source": &m.Source, "ref": &m.Ref, "commit": &m.Commit} {
			v, present := t[key]
			if !present {
				continue
			}
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("%w %s: marketplaces[%d].%s must be a string; fix the file by hand", ErrMalformed, f.path, i, key)
			}
			*dst = s
		}
		if m.Name == "" || m.Source == "" {
			return nil, fmt.Errorf("%w %s: marketplaces[%d] needs a name and a source; fix the file by hand or run `yolop ext marketplace remove`", ErrMalformed, f.path, i)
		}
		out = append(out, m)
	}
	return out, nil
}

func setMarketplaces(d *doc, list []Marketplace) error {
	d.k.Delete(marketplacesKey)
	if len(list) == 0 {
		return nil
	}
	items := make([]any, len(list))
	for i, m := range list {
		t := map[string]any{"name": m.Name, "source": m.Source}
		if m.Ref != "" {
			t["ref"] = m.Ref
		}
		if m.Commit != "" {
			t["commit"] = m.Commit
		}
		items[i] = t
	}
	return d.k.Set(marketplacesKey, items)
}
