package stdio

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"yolop.dev/core"
)

// resolveCommand returns the absolute path of spec's command. A bare name
// is looked up in <PackageDir>/bin, then in the directories of pathEnv (the
// server's PATH). A relative path is taken relative to PackageDir (or Dir
// when there is no package) and may not leave PackageDir.
func resolveCommand(spec core.ServerSpec, pathEnv string) (string, error) {
	cmd := spec.Command
	fix := "fix \"command\" in the extension's plugin.json"
	if cmd == "" {
		return "", fmt.Errorf("extension %q: %w; %s", spec.Name, ErrNoCommand, fix)
	}
	if filepath.IsAbs(cmd) {
		return checkExecutable(spec.Name, filepath.Clean(cmd))
	}
	if strings.ContainsRune(cmd, '/') || strings.ContainsRune(cmd, filepath.Separator) {
		base := spec.PackageDir
		if base == "" {
			base = spec.Dir
		}
		if base == "" {
			return "", fmt.Errorf("extension %q: relative command %q needs a package directory to resolve against; give an absolute path or a bare name, or %s", spec.Name, cmd, fix)
		}
		base, err := filepath.Abs(base)
		if err != nil {
			return "", fmt.Errorf("extension %q: resolve package directory %q: %w", spec.Name, base, err)
		}
		full := filepath.Join(base, cmd)
		if spec.PackageDir != "" && !within(base, full) {
			return "", fmt.Errorf("extension %q: %w: %q resolves to %s, outside %s; keep the executable inside the package (for example in bin/) and %s", spec.Name, ErrCommandOutsidePackage, cmd, full, base, fix)
		}
		return checkExecutable(spec.Name, full)
	}

	var looked []string
	if spec.PackageDir != "" {
		bin, err := filepath.Abs(filepath.Join(spec.PackageDir, "bin"))
		if err != nil {
			return "", fmt.Errorf("extension %q: resolve package directory %q: %w", spec.Name, spec.PackageDir, err)
		}
		if p, ok, err := candidate(spec.Name, bin, cmd); ok || err != nil {
			return p, err
		}
		looked = append(looked, bin)
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		// A relative PATH entry would resolve against the server's
		// working directory, which the package controls: skip it.
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		if p, ok, err := candidate(spec.Name, dir, cmd); ok || err != nil {
			return p, err
		}
	}
	where := "PATH (" + pathEnv + ")"
	if pathEnv == "" {
		where = "PATH (empty)"
	}
	if len(looked) > 0 {
		where = strings.Join(looked, ", ") + " and " + where
	}
	return "", fmt.Errorf("extension %q: %w: %q; looked in %s; put the executable in the package's bin/ directory, install it on PATH, or %s", spec.Name, ErrCommandNotFound, cmd, where, fix)
}

// candidate checks dir/name. It reports ok when it is an executable file,
// and an error when it exists but cannot be run; a missing file is neither.
func candidate(ext, dir, name string) (string, bool, error) {
	p := filepath.Join(dir, name)
	fi, err := os.Stat(p)
	if err != nil {
		return "", false, nil
	}
	if fi.IsDir() {
		return "", false, nil
	}
	if _, err := checkExecutable(ext, p); err != nil {
		return "", false, err
	}
	return p, true, nil
}

// checkExecutable returns p if it is an executable regular file.
func checkExecutable(ext, p string) (string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		if os.IsNotExist(err) {
			return "", fmt.Errorf("extension %q: %w: %s does not exist; install it or fix \"command\" in the extension's plugin.json", ext, ErrCommandNotFound, p)
		}
		return "", fmt.Errorf("extension %q: stat command %s: %w", ext, p, err)
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("extension %q: %w: %s (mode %v); make it executable (chmod +x) or fix \"command\" in the extension's plugin.json", ext, ErrNotExecutable, p, fi.Mode())
	}
	return p, nil
}

// within reports whether p is base or lies below it (both clean, absolute).
func within(base, p string) bool {
	rel, err := filepath.Rel(base, p)
	if err != nil {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
