package manager

import (
	"context"

	"yolop.dev/packaging"
)

// MarketplaceSources resolves "<plugin>@<marketplace>" install sources
// against the marketplaces the user added (harness/marketplace).
type MarketplaceSources interface {
	// Source returns the packaging.SourceMarketplace source of s, and
	// false when s does not name an entry of an added marketplace.
	Source(ctx context.Context, s string) (packaging.Source, bool)
}

// parseSource parses an install source: <plugin>@<marketplace> when that
// marketplace was added (it wins over the crate shorthand <name>@<version>),
// else what packaging.ParseSource accepts.
func (m *Manager) parseSource(ctx context.Context, s string) (packaging.Source, error) {
	if m.o.Marketplaces != nil {
		if src, ok := m.o.Marketplaces.Source(ctx, s); ok {
			return src, nil
		}
	}
	return packaging.SourceOptions{AllowFileURL: m.o.AllowFileGit}.Parse(s)
}

// lockedSource is the source an extensions.lock entry records.
func (m *Manager) lockedSource(e *packaging.LockEntry) (packaging.Source, error) {
	if e.Kind == packaging.SourceMarketplace {
		return packaging.Source{Kind: e.Kind, Raw: e.Source}, nil
	}
	return packaging.SourceOptions{AllowFileURL: m.o.AllowFileGit}.Parse(e.Source)
}
