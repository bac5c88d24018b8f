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
	const want = "advisories.allow must be a list of \"<extension>:<advisory id>\" strings such as [\"echo:YOLOP-2026-0001\"]"
	return f.stringList(ctx, AdvisoriesAllowKey, want, func(s string) error {
		if ext, id, ok := strings.Cut(s, ":"); !ok || ext == "" || id == "" {
			return fmt.Errorf("%w %s: %s", ErrMalformed, f.path, want)
		}
		return nil
	})
}
