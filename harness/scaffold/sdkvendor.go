package scaffold

import (
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
)

// SDKDir is the package-relative directory an --sdk scaffold vendors the
// language's SDK into; the server under bin/ imports it from there, so
// the package installs and runs with no network and no package manager.
const SDKDir = "lib/yolop-sdk"

// A vendoredSDK is what an --sdk scaffold of one language writes besides
// the manifest: its server template and the SDK's runtime files.
type vendoredSDK struct {
	// template is the server's template, under templates/.
	template string
	// fsys holds the SDK's runtime files, rooted at the SDK's package;
	// every regular file is copied under SDKDir.
	fsys fs.FS
}

// vendoredSDKs is filled by the sdk_<lang>.go files, one per language
// whose SDK module embeds its sources.
var vendoredSDKs = map[string]vendoredSDK{}

// sdkLangs lists the languages --sdk takes, sorted.
func sdkLangs() []string { return slices.Sorted(maps.Keys(vendoredSDKs)) }

// files lists the SDK's files as they are written into the package.
func (v vendoredSDK) files() ([]file, error) {
	var out []file
	err := fs.WalkDir(v.fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(v.fsys, p)
		if err != nil {
			return err
		}
		out = append(out, file{path: path.Join(SDKDir, p), data: b, mode: 0o644})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scaffold: the vendored SDK: %w", err)
	}
	return out, nil
}
