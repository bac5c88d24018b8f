package fetch

import (
	"context"
	"errors"

	"yolop.dev/registry/cratesio"
)

// ErrHeld is returned (wrapped) by a fetch whose [Gate] holds the update
// back: everything newer than what is installed is still in its cooldown.
// Nothing was fetched or changed.
var ErrHeld = errors.New("the update is held back by the cooldown")

// A CrateVersion is one version of a crate's index as a [Gate] sees it.
type CrateVersion struct {
	Version string
	Yanked  bool
	// Eligible: not yanked and matched by the source's version
	// requirement, so an install may pick it.
	Eligible bool
}

// A Gate sees what each fetch saw in a registry index or a git ref, and
// decides what an update may install (the update cooldown,
// harness/firstseen).
type Gate interface {
	// Crate is told every version of crate in registry ("sparse+URL/").
	// It returns the version to install, "" to let the requirement pick
	// the highest eligible one, or an error wrapping [ErrHeld].
	Crate(ctx context.Context, registry, crate string, versions []CrateVersion) (string, error)
	// Git is told the commit the ref rev ("" for HEAD) of url resolves to.
	// It returns the commit to install instead ("" for commit itself), or
	// an error wrapping [ErrHeld].
	Git(ctx context.Context, url, rev, commit string) (string, error)
}

// gateCrate shows the gate every version in the index of src's crate and
// returns the version the gate picked ("" for the usual resolution).
func gateCrate(ctx context.Context, g Gate, cl *cratesio.Client, crate, requirement string) (string, error) {
	req, err := cratesio.ParseRequirement(requirement)
	if err != nil {
		return "", nil // Resolve reports it
	}
	f, err := cl.Index(ctx, crate)
	if err != nil {
		return "", nil // Resolve reports it
	}
	vs := make([]CrateVersion, 0, len(f.Entries))
	for i := range f.Entries {
		e := &f.Entries[i]
		vs = append(vs, CrateVersion{Version: e.Vers, Yanked: e.Yanked, Eligible: !e.Yanked && req.Matches(e.Version())})
	}
	return g.Crate(ctx, cl.Registry(), crate, vs)
}
