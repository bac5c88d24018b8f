package confine

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"yolop.dev/core"
)

// A plan is what the transport hands the launcher: the rules, already
// expanded into paths, and the program to exec under them. It travels as
// JSON in [planEnv], which the launcher removes before the exec.
type plan struct {
	// Format is [planFormat] of the host that wrote the plan; a launcher
	// refuses any other, so one built from other source (a stale
	// yolop-sandbox beside a newer yolop) never misreads the rules.
	Format  int      `json:"format"`
	Program string   `json:"program"`
	Args    []string `json:"args"`
	// ABI is the highest Landlock ABI the launcher asks the kernel for
	// (lowered by [SetKernelABIForTesting]); 0 applies nothing.
	ABI int `json:"abi"`
	// Read, Write and Exec are the paths (files or directories) the
	// program may read, read and write, and read and execute.
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
	Exec  []string `json:"exec,omitempty"`
	// Connect and Bind are the TCP ports allowed; none means no TCP.
	Connect []uint16 `json:"connect,omitempty"`
	Bind    []uint16 `json:"bind,omitempty"`
	// Probe, when set, makes the launcher run probes under the rules
	// instead of exec'ing Program.
	Probe *probePlan `json:"probe,omitempty"`
}

// planFormat numbers the plan's layout and meaning. Bump it with every
// change to [plan] or to how a launcher applies it.
const planFormat = 1

// The system directories every confined server may read: the dynamic
// loader's libraries, the interpreters' standard libraries, and /etc for
// ld.so.cache, locale, TLS roots, resolv.conf and passwd. They are
// executable only when the confinement allows running other programs.
var systemDirs = []string{"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin"}

// systemReadOnly are read, never executed.
var systemReadOnly = []string{"/etc", "/dev/urandom", "/dev/random", "/dev/zero", "/proc/self"}

// systemReadWrite are read and written.
var systemReadWrite = []string{"/dev/null"}

// isSystem reports whether path lies under one of the system directories.
func isSystem(path string) bool {
	for _, d := range systemDirs {
		if path == d || strings.HasPrefix(path, d+"/") {
			return true
		}
	}
	return false
}

// buildPlan turns a confinement into the launcher's plan for program (an
// absolute path) run with args, whose environment's PATH is pathEnv, with
// tmpDir as its private temporary directory ("" for none).
func buildPlan(c *core.Confinement, program string, args []string, pathEnv, tmpDir string) plan {
	p := plan{Format: planFormat, Program: program, Args: args, ABI: KernelABI()}
	p.Read = append(p.Read, systemReadOnly...)
	p.Write = append(p.Write, systemReadWrite...)
	if c.Exec {
		p.Exec = append(p.Exec, systemDirs...)
	} else {
		p.Read = append(p.Read, systemDirs...)
	}
	execFiles, prefixes := programChain(program, pathEnv)
	p.Exec = append(p.Exec, execFiles...)
	p.Exec = append(p.Exec, prefixes...)
	for _, cp := range c.Paths {
		if cp.Path == "" || !filepath.IsAbs(cp.Path) {
			continue
		}
		path := filepath.Clean(cp.Path)
		switch {
		case cp.Write:
			p.Write = append(p.Write, path)
			if c.Exec {
				p.Exec = append(p.Exec, path)
			}
		case c.Exec:
			p.Exec = append(p.Exec, path)
		default:
			p.Read = append(p.Read, path)
		}
	}
	if tmpDir != "" {
		p.Write = append(p.Write, tmpDir)
	}
	p.Connect = slices.Clone(c.Connect)
	p.Bind = slices.Clone(c.Bind)
	return p
}

// programChain returns the files that must be executable for program to
// start (the program, every interpreter its shebang lines name, followed
// through /usr/bin/env and the PATH, and the ELF loader of each binary,
// with the targets of symbolic links) and the install prefixes of
// interpreters outside the system directories (a version manager's shim or
// a toolchain under the home directory: its prefix, never the home itself).
func programChain(program, pathEnv string) (files, prefixes []string) {
	home, _ := os.UserHomeDir()
	addFile := func(f string) string {
		files = append(files, f)
		if real, err := filepath.EvalSymlinks(f); err == nil && real != f {
			files = append(files, real)
			return real
		}
		return f
	}
	addPrefix := func(f string) {
		if dir := installPrefix(f, home); dir != "" {
			prefixes = append(prefixes, dir)
		}
	}
	cur := program
	for depth := 0; depth < 6 && cur != ""; depth++ {
		real := addFile(cur)
		if depth > 0 {
			addPrefix(cur)
			addPrefix(real)
		}
		if interp := elfInterp(real); interp != "" {
			addFile(interp)
			return files, prefixes
		}
		next, ok := shebang(real)
		if !ok {
			break
		}
		interp, rest := next[0], next[1:]
		if filepath.Base(interp) == "env" {
			addFile(interp)
			if ei := elfInterp(interp); ei != "" {
				addFile(ei)
			}
			name := ""
			for _, a := range rest {
				if !strings.HasPrefix(a, "-") && !strings.Contains(a, "=") {
					name = a
					break
				}
			}
			if name == "" {
				break
			}
			interp = lookPath(name, pathEnv)
		}
		cur = interp
	}
	return files, prefixes
}

// shebang returns the fields of program's #! line.
func shebang(program string) ([]string, bool) {
	f, err := os.Open(program)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	buf := make([]byte, 256)
	n, _ := f.Read(buf)
	buf = buf[:n]
	if !bytes.HasPrefix(buf, []byte("#!")) {
		return nil, false
	}
	line, _, _ := bytes.Cut(buf[2:], []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) == 0 || !filepath.IsAbs(fields[0]) {
		return nil, false
	}
	return fields, true
}

// elfInterp returns the dynamic loader an ELF executable names, "" for a
// static binary or anything else.
func elfInterp(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	for _, prog := range f.Progs {
		if prog.Type != elf.PT_INTERP {
			continue
		}
		b := make([]byte, prog.Filesz)
		if _, err := prog.ReadAt(b, 0); err != nil {
			return ""
		}
		return string(bytes.TrimRight(b, "\x00"))
	}
	return ""
}

// lookPath finds name in pathEnv like execvp would; "" when absent.
func lookPath(name, pathEnv string) string {
	if strings.Contains(name, "/") {
		return name
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil && filepath.IsAbs(p) && pathEnv == "" {
		return p
	}
	return ""
}

// installPrefix is the directory an interpreter outside the system
// directories is installed in, "" for a system one: under the home
// directory, the top directory of a version manager's tree (~/.pyenv,
// ~/.nvm, ~/.asdf), which holds the shim, the manager and the
// interpreters, never the home itself; elsewhere the parent of its bin/
// directory, or its own directory.
func installPrefix(f, home string) string {
	if isSystem(f) {
		return ""
	}
	if rest, ok := strings.CutPrefix(f, home+"/"); ok && home != "" && home != "/" {
		if first, _, found := strings.Cut(rest, "/"); found {
			return filepath.Join(home, first)
		}
		return ""
	}
	dir := filepath.Dir(f)
	if filepath.Base(dir) == "bin" {
		dir = filepath.Dir(dir)
	}
	if dir == "/" || dir == home || dir == filepath.Dir(home) {
		return ""
	}
	return dir
}
