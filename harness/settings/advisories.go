package settings

import (
	"context"
	"fmt"
	"strings"
)

// AdvisoriesAllowKey lists the critical registry advisories the user
// accepts, each for one extension, so that extension still starts:
//
//	[advisories]
//	allow = ["echo:YOLOP-2026-0001"]   # "<extension>:<advisory id>"
//
// It is read from the user's settings.toml only.
const AdvisoriesAllowKey = "advisories" + delim + "allow"

// AdvisoriesAllow returns [advisories] allow. Unset means none; an entry
// that is not "<extension>:<id>" is an error naming the file.
func (f *File) AdvisoriesAllow(ctx context.Context) ([]string, error) {
	var out []string
	err := f.read(ctx, func(d *doc) error {
		if !d.k.Exists(AdvisoriesAllowKey) {
			return nil
		}
		bad := fmt.Errorf("%w %s: advisories.allow must be a list of \"<extension>:<advisory id>\" strings such as [\"echo:YOLOP-2026-0001\"]", ErrMalformed, f.path)
		list, ok := d.k.Get(AdvisoriesAllowKey).([]any)
		if !ok {
			return bad
		}
		for _, v := range list {
			s, ok := v.(string)
			if !ok {
				return bad
			}
			if ext, id, ok := strings.Cut(s, ":"); !ok || ext == "" || id == "" {
				return bad
			}
			out = append(out, s)
		}
		return nil
	})
	return out, err
}
