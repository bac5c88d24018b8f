package confine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// shells are the interpreters a version manager's shim is written in.
var shells = []string{"sh", "bash", "dash", "zsh"}

// managerExec finds the line of a pyenv-, rbenv-, nodenv- or asdf-style
// shim that hands over to its manager: exec "<manager>" exec ...
var managerExec = regexp.MustCompile(`(?m)^\s*exec\s+"?(/[^"\s]+)"?\s+exec\s`)

// resolveShim looks through a version manager's shim. A script whose #!
// line is "/usr/bin/env NAME", where NAME is found on the PATH as a shell
// script outside the system directories that hands over to a manager
// (pyenv, rbenv, nodenv, asdf), would need the system's programs to run
// (the shim's shell runs readlink, basename and the like), which a sandbox
// without exec forbids. So the manager is asked which interpreter it would
// run ("<manager> which NAME", unconfined, in the server's environment:
// the manager is the user's, not the extension's), and the script is
// started by that interpreter directly: program becomes the interpreter
// and args [interpreter, shebang args..., script, args[1:]...]. A command
// that is itself such a shim ("python3" found on the PATH) is started as
// the interpreter the manager names, with the same arguments.
//
// shim is true when a shim was found; ok is false when it could not be
// resolved (the caller then lets the server run the system's programs,
// which is what the shim needs).
func resolveShim(program string, args, env []string) (newProgram string, newArgs []string, shim, ok bool, root string) {
	// The command itself may be the shim: "python3" found on the PATH.
	if !isSystem(program) {
		if real, isShim, resolved, root := throughManagerRoot(program, filepath.Base(program), env); isShim {
			if !resolved {
				return program, args, true, false, root
			}
			newArgs = append([]string{real}, args[min(1, len(args)):]...)
			return real, newArgs, true, true, root
		}
	}
	fields, isScript := shebang(program)
	if !isScript || filepath.Base(fields[0]) != "env" {
		return program, args, false, true, ""
	}
	nameAt := -1
	for i, a := range fields[1:] {
		if !strings.HasPrefix(a, "-") && !strings.Contains(a, "=") {
			nameAt = i + 1
			break
		}
	}
	if nameAt < 0 {
		return program, args, false, true, ""
	}
	name := fields[nameAt]
	found := lookPath(name, envValue(env, "PATH"))
	if found == "" || isSystem(found) {
		return program, args, false, true, ""
	}
	real, isShim, resolved, root := throughManagerRoot(found, name, env)
	if !isShim {
		return program, args, false, true, ""
	}
	if !resolved {
		return program, args, true, false, root
	}
	newArgs = append([]string{real}, fields[nameAt+1:]...)
	newArgs = append(newArgs, program)
	if len(args) > 1 {
		newArgs = append(newArgs, args[1:]...)
	}
	return real, newArgs, true, true, root
}

// throughManagerRoot reports whether found is a version manager's shell
// shim and, when it is, asks the manager which interpreter NAME it would
// run. resolved is false when the manager could not say (or named the
// shim again). root is the manager's root (the directory above the one
// holding the manager program, such as ~/.pyenv for
// ~/.pyenv/libexec/pyenv), which an unresolved shim needs to run.
func throughManagerRoot(found, name string, env []string) (real string, shim, resolved bool, root string) {
	sf, isScript := shebang(found)
	if !isScript {
		return "", false, false, ""
	}
	interp := filepath.Base(sf[0])
	if interp == "env" && len(sf) > 1 {
		interp = filepath.Base(sf[1])
	}
	if !slices.Contains(shells, interp) {
		return "", false, false, ""
	}
	body, err := os.ReadFile(found)
	if err != nil {
		return "", false, false, ""
	}
	m := managerExec.FindSubmatch(body)
	if m == nil {
		return "", false, false, ""
	}
	root = managerRoot(string(m[1]))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, string(m[1]), "which", name)
	cmd.Env = env
	out, err := cmd.Output()
	real = strings.TrimSpace(string(out))
	if err != nil || !filepath.IsAbs(real) {
		return "", true, false, root
	}
	if st, err := os.Stat(real); err != nil || st.Mode()&0o111 == 0 {
		return "", true, false, root
	}
	// A manager that does not know itself here (its root found through a
	// HOME that is not the one it was installed under) answers with the
	// shim again: that is no interpreter.
	if same, _ := sameFile(real, found); same || managerExec.Match(readHead(real)) {
		return "", true, false, root
	}
	return real, true, true, root
}

// managerRoot is the root of a version manager whose program is at
// manager ("<root>/libexec/pyenv", "<root>/bin/asdf"); "" when that would
// be a system directory, "/" or the home directory itself.
func managerRoot(manager string) string {
	root := filepath.Dir(filepath.Dir(manager))
	home, _ := os.UserHomeDir()
	if root == "/" || root == "." || isSystem(root) || (home != "" && root == filepath.Clean(home)) {
		return ""
	}
	return root
}

// sameFile reports whether a and b name the same file.
func sameFile(a, b string) (bool, error) {
	sa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	sb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(sa, sb), nil
}

// readHead returns the first 4 KiB of a file, or nothing.
func readHead(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b := make([]byte, 4096)
	n, _ := f.Read(b)
	return b[:n]
}
