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
func resolveShim(program string, args, env []string) (newProgram string, newArgs []string, shim, ok bool) {
	// The command itself may be the shim: "python3" found on the PATH.
	if !isSystem(program) {
		if real, isShim, resolved := throughManager(program, filepath.Base(program), env); isShim {
			if !resolved {
				return program, args, true, false
			}
			newArgs = append([]string{real}, args[min(1, len(args)):]...)
			return real, newArgs, true, true
		}
	}
	fields, isScript := shebang(program)
	if !isScript || filepath.Base(fields[0]) != "env" {
		return program, args, false, true
	}
	nameAt := -1
	for i, a := range fields[1:] {
		if !strings.HasPrefix(a, "-") && !strings.Contains(a, "=") {
			nameAt = i + 1
			break
		}
	}
	if nameAt < 0 {
		return program, args, false, true
	}
	name := fields[nameAt]
	found := lookPath(name, envValue(env, "PATH"))
	if found == "" || isSystem(found) {
		return program, args, false, true
	}
	real, isShim, resolved := throughManager(found, name, env)
	if !isShim {
		return program, args, false, true
	}
	if !resolved {
		return program, args, true, false
	}
	newArgs = append([]string{real}, fields[nameAt+1:]...)
	newArgs = append(newArgs, program)
	if len(args) > 1 {
		newArgs = append(newArgs, args[1:]...)
	}
	return real, newArgs, true, true
}

// throughManager reports whether found is a version manager's shell shim
// and, when it is, asks the manager which interpreter NAME it would run.
// resolved is false when the manager could not say.
func throughManager(found, name string, env []string) (real string, shim, resolved bool) {
	sf, isScript := shebang(found)
	if !isScript {
		return "", false, false
	}
	interp := filepath.Base(sf[0])
	if interp == "env" && len(sf) > 1 {
		interp = filepath.Base(sf[1])
	}
	if !slices.Contains(shells, interp) {
		return "", false, false
	}
	body, err := os.ReadFile(found)
	if err != nil {
		return "", false, false
	}
	m := managerExec.FindSubmatch(body)
	if m == nil {
		return "", false, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, string(m[1]), "which", name)
	cmd.Env = env
	out, err := cmd.Output()
	real = strings.TrimSpace(string(out))
	if err != nil || !filepath.IsAbs(real) {
		return "", true, false
	}
	if st, err := os.Stat(real); err != nil || st.Mode()&0o111 == 0 {
		return "", true, false
	}
	return real, true, true
}
