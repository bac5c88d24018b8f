package confine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"yolop.dev/core"
)

const (
	// launcherArg is the launcher's argv[1]. A binary that does not call
	// [Init] sees it as an unknown flag and exits, which the status pipe
	// reports (see [Command.Started]).
	launcherArg = "-yolop-confine-launcher"
	// planEnv carries the JSON plan; the launcher removes it before exec.
	planEnv = "YOLOP_CONFINE_PLAN"
	// probeArg and probeEnv start the process that runs the probes,
	// exec'd by a probe launch under the rules.
	probeArg = "-yolop-confine-probe"
	probeEnv = "YOLOP_CONFINE_PROBE"
	// statusFD is the launcher's end of the status pipe.
	statusFD = 3
)

// The launcher's status bytes: it writes statusAlive once it runs, then
// either nothing (the pipe closes at a successful exec, being
// close-on-exec) or statusFailed followed by the reason.
const (
	statusAlive  = 'L'
	statusFailed = 'E'
)

// startTimeout bounds how long [Command.Started] waits for the launcher's
// verdict; only a launcher binary that neither calls Init nor exits can
// hold the pipe that long.
var startTimeout = 30 * time.Second

// init makes every binary that links this package its own launcher: a
// process the transport started as a launcher applies its rules and execs
// the server here, before main runs, so neither yolop nor a host of one's
// own on the harness, nor a test binary, has to remember a call.
func init() { Init() }

// launcherPlan reads the plan the transport hands a launcher and tells the
// transport, on the status pipe, that the launcher runs; fail reports a
// failure there and exits. ok is false when no plan was handed over.
func launcherPlan() (p plan, fail func(format string, args ...any), ok bool) {
	raw, ok := os.LookupEnv(planEnv)
	if !ok {
		return plan{}, nil, false
	}
	os.Unsetenv(planEnv)
	syscall.CloseOnExec(statusFD)
	status := os.NewFile(statusFD, "confine-status")
	status.Write([]byte{statusAlive})
	fail = func(format string, args ...any) {
		status.Write(append([]byte{statusFailed}, fmt.Sprintf(format, args...)...))
		os.Exit(126)
	}
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		fail("sandbox launcher: bad plan: %v", err)
	}
	if p.Format != planFormat {
		fail("the sandbox launcher %s reads plan format %d, and the host wrote format %d: it was built from another version of yolop; rebuild it from the host's source (or remove it to use the host's own binary)", os.Args[0], planFormat, p.Format)
	}
	return p, fail, true
}

// LauncherEnv names the environment variable that points at the launcher
// to use when none is given: an absolute path to a binary that links this
// package, built from the same source as the host.
const LauncherEnv = "YOLOP_SANDBOX_LAUNCHER"

// SmallLauncher is the name of the small launcher binary (built from
// yolop.dev/transport/stdio/confine/cmd/yolop-sandbox) that is used when it
// lies beside the host's executable.
const SmallLauncher = "yolop-sandbox"

// LauncherPath returns the launcher for a confined start: explicit when it
// is set, else $YOLOP_SANDBOX_LAUNCHER, else yolop-sandbox beside this
// executable, else this executable. Every start of a launcher runs the
// initialisation of every package its binary links before this package's
// runs, so a small launcher starts a confined server sooner than a large
// host re-executed (docs/performance.md).
func LauncherPath(explicit string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	if v := os.Getenv(LauncherEnv); v != "" {
		if !filepath.IsAbs(v) {
			return "", fmt.Errorf("confine: %s=%q: the sandbox launcher must be an absolute path", LauncherEnv, v)
		}
		return v, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("confine: find the launcher (this executable): %w", err)
	}
	return besideOrSelf(exe), nil
}

// LauncherNote says which launcher [LauncherPath] chooses when none is
// given and, when it is this executable, how to start confined servers
// sooner.
func LauncherNote() (string, error) {
	l, err := LauncherPath("")
	if err != nil {
		return "", err
	}
	if exe, _ := os.Executable(); l != exe {
		return fmt.Sprintf("confined servers start through %s", l), nil
	}
	return fmt.Sprintf("confined servers start through this binary (%s), which first initialises every package it links; %s beside it starts them sooner (docs/security.md)", l, SmallLauncher), nil
}

// besideOrSelf returns the small launcher beside exe when there is one
// (a regular, executable file), else exe.
func besideOrSelf(exe string) string {
	small := filepath.Join(filepath.Dir(exe), SmallLauncher)
	if st, err := os.Stat(small); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 && small != exe {
		return small
	}
	return exe
}

// A Launch describes one confined start.
type Launch struct {
	// Launcher is a binary that links this package (so [Init] runs in
	// it). Empty means [LauncherPath]'s choice.
	Launcher string
	// Program is the absolute path of the server's executable, Args its
	// argv (Args[0] included) and Env its environment.
	Program string
	Args    []string
	Env     []string
	// Sandbox is the confinement; it must not be nil.
	Sandbox *core.Confinement
	// TempDir is the instance's private temporary directory, granted read
	// and write; "" grants none.
	TempDir string
}

// A Command is a prepared launch: start a process with Path, Args, Env
// and ExtraFiles (the status pipe must be the child's fd 3, so ExtraFiles
// goes first), then call Started.
type Command struct {
	Path       string
	Args       []string
	Env        []string
	ExtraFiles []*os.File

	status *os.File // our end of the status pipe
}

// Command prepares the launch.
func (l Launch) Command() (*Command, error) {
	if l.Sandbox == nil {
		return nil, errors.New("confine: no sandbox to launch under")
	}
	program, args, shim, resolved, root := resolveShim(l.Program, l.Args, l.Env)
	p := buildPlan(l.Sandbox, program, args, envValue(l.Env, "PATH"), l.TempDir)
	if shim && resolved {
		// The program is now the interpreter: its install prefix holds
		// its standard library.
		home, _ := os.UserHomeDir()
		if dir := installPrefix(program, home); dir != "" {
			p.Exec = append(p.Exec, dir)
		}
		if real, err := filepath.EvalSymlinks(program); err == nil {
			if dir := installPrefix(real, home); dir != "" {
				p.Exec = append(p.Exec, dir)
			}
		}
	}
	if shim && !resolved {
		// An unresolved shim runs the system's programs and its
		// manager (under the manager's root, never the whole home) to
		// start the interpreter: let it, or the server cannot start.
		p.Exec = append(p.Exec, systemDirs...)
		if root != "" {
			p.Exec = append(p.Exec, root)
		}
	}
	return l.command(p)
}

func (l Launch) command(p plan) (*Command, error) {
	launcher, err := LauncherPath(l.Launcher)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("confine: status pipe: %w", err)
	}
	env := make([]string, 0, len(l.Env)+1)
	for _, kv := range l.Env {
		if !strings.HasPrefix(kv, planEnv+"=") {
			env = append(env, kv)
		}
	}
	env = append(env, planEnv+"="+string(raw))
	return &Command{
		Path:       launcher,
		Args:       []string{launcher, launcherArg},
		Env:        env,
		ExtraFiles: []*os.File{w},
		status:     r,
	}, nil
}

// Started waits for the launcher's verdict once the process has started:
// nil when it exec'd the server under the rules, else why not (the rules
// could not be applied, the program could not be exec'd, or the launcher
// binary does not call [Init]). It closes the pipe either way.
func (c *Command) Started() error {
	c.closeChild()
	defer c.status.Close()
	_ = c.status.SetReadDeadline(time.Now().Add(startTimeout))
	b, err := io.ReadAll(c.status)
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return fmt.Errorf("the sandbox launcher %s did not report within %s; a launcher is a program that links yolop.dev/transport/stdio/confine", c.Path, startTimeout)
		}
		return fmt.Errorf("sandbox launcher status: %w", err)
	}
	if len(b) == 0 || b[0] != statusAlive {
		return fmt.Errorf("the sandbox launcher %s is not one: it exited without applying the sandbox (a launcher is a program that links yolop.dev/transport/stdio/confine)", c.Path)
	}
	if len(b) > 1 && b[1] == statusFailed {
		return errors.New(string(b[2:]))
	}
	return nil
}

// Close releases the pipe when the process could not be started.
func (c *Command) Close() {
	c.closeChild()
	c.status.Close()
}

func (c *Command) closeChild() {
	for _, f := range c.ExtraFiles {
		f.Close()
	}
}

func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}
