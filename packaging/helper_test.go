package packaging

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// The helper process installs a package into a store, like `yolop ext
// install` would, and can freeze at a named step so the test kills it there.
//
//	PACKAGING_TEST_HELPER=install
//	HELPER_CONFIG   store config dir
//	HELPER_SRC      package directory to copy in (as a git fetch would)
//	HELPER_CRASH_AT step to freeze at: copy (mid-copy), fetched, journal,
//	                aside, placed, locked; "" runs to completion
//	HELPER_MARKER   file created when frozen
//	HELPER_OP       "remove" removes extension demo instead of installing
const helperEnv = "PACKAGING_TEST_HELPER"

func runHelper() int {
	crashAt := os.Getenv("HELPER_CRASH_AT")
	freeze := func(step string) {
		if step == crashAt {
			os.WriteFile(os.Getenv("HELPER_MARKER"), []byte(step), 0o644)
			time.Sleep(time.Hour) // killed here
		}
	}
	s := NewStore(os.Getenv("HELPER_CONFIG"))
	s.hook = freeze
	if os.Getenv("HELPER_OP") == "remove" {
		if err := s.Remove(context.Background(), "demo"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	src := os.Getenv("HELPER_SRC")
	_, err := s.Install(context.Background(), InstallOptions{
		Source: Source{Kind: SourceGit, URL: "https://example.com/o/" + filepath.Base(src)},
		Fetch: func(ctx context.Context, dir string) (FetchResult, error) {
			// Copy the manifest first, freeze mid-copy if asked, then the rest.
			if err := copyFile(filepath.Join(src, "plugin.json"), filepath.Join(dir, "plugin.json"), 0o644); err != nil {
				return FetchResult{}, err
			}
			freeze("copy")
			tmp := dir + "-rest"
			defer os.RemoveAll(tmp)
			if err := CopyTree(src, tmp); err != nil {
				return FetchResult{}, err
			}
			os.Remove(filepath.Join(tmp, "plugin.json"))
			ents, _ := os.ReadDir(tmp)
			for _, e := range ents {
				if err := os.Rename(filepath.Join(tmp, e.Name()), filepath.Join(dir, e.Name())); err != nil {
					return FetchResult{}, err
				}
			}
			return FetchResult{Commit: "0123456789012345678901234567890123456789"}, nil
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
