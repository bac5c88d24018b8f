package stdio

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/time/rate"

	"yolop.dev/core"
	"yolop.dev/internal/stderrpump"
	"yolop.dev/transport/stdio/confine"
)

// Options configure a [Transport]. Every field's zero value is a sensible
// default.
type Options struct {
	// Logger receives each server's stderr lines, through a sub-logger
	// named after the extension. Nil means hclog.NewNullLogger().
	Logger hclog.Logger
	// StderrLevel is the level stderr lines are logged at. Zero
	// (hclog.NoLevel) means hclog.Info.
	StderrLevel hclog.Level
	// StderrLines is how many of the last stderr lines an instance keeps
	// for StderrTail and ExitError. Zero means 50; negative keeps none.
	StderrLines int
	// StderrLineBytes caps one stderr line: the rest is discarded as it is
	// read and replaced by a note of its size. Zero means 4096.
	StderrLineBytes int
	// StderrRate is how many stderr lines per second are logged in the
	// long run; lines over the rate are counted and kept in the tail but
	// not logged. Zero means 20.
	StderrRate float64
	// StderrBurst is how many stderr lines may be logged at once before
	// StderrRate applies. Zero means 100.
	StderrBurst int
	// StderrDrain is how long the waiter lets stderr reach end-of-file after
	// the server has been reaped, before closing it; only a descendant that
	// left the server's process group can hold it open that long. Zero
	// means 500ms.
	StderrDrain time.Duration
	// BaseEnvAllowlist names the host variables a server inherits: exact
	// names, or prefixes ending in "*". Nil means [DefaultEnvAllowlist]; an
	// empty, non-nil slice passes nothing from the host. Variables whose
	// names look like credentials are dropped whatever this says.
	BaseEnvAllowlist []string
	// TermGrace is how long Stop waits after SIGTERM before it sends
	// SIGKILL. Zero means 2s.
	TermGrace time.Duration
	// Environ returns the host environment to filter. Nil means
	// [os.Environ].
	Environ func() []string
	// Launcher is the binary that starts a server confined by
	// core.ServerSpec.Sandbox: a program that links package confine,
	// which makes it a launcher when re-executed as one. Empty means
	// confine.LauncherPath's choice: $YOLOP_SANDBOX_LAUNCHER, else
	// yolop-sandbox beside os.Executable(), else os.Executable(), which
	// links it through this package.
	Launcher string
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.StderrLevel == hclog.NoLevel {
		o.StderrLevel = hclog.Info
	}
	if o.StderrLines == 0 {
		o.StderrLines = 50
	}
	if o.StderrLineBytes <= 0 {
		o.StderrLineBytes = 4096
	}
	if o.StderrRate <= 0 {
		o.StderrRate = 20
	}
	if o.StderrBurst <= 0 {
		o.StderrBurst = 100
	}
	if o.StderrDrain <= 0 {
		o.StderrDrain = 500 * time.Millisecond
	}
	if o.BaseEnvAllowlist == nil {
		o.BaseEnvAllowlist = DefaultEnvAllowlist()
	}
	if o.TermGrace <= 0 {
		o.TermGrace = 2 * time.Second
	}
	if o.Environ == nil {
		o.Environ = os.Environ
	}
	return o
}

// A Transport is a [core.Transport] that runs each server as a subprocess
// speaking over its stdin and stdout. Create one with [New]; the zero
// Transport is usable and behaves like New(Options{}). A Transport holds no
// state besides its options and may be used from many goroutines.
type Transport struct {
	opts Options
}

var _ core.Transport = (*Transport)(nil)

// New returns a Transport with the given options.
func New(opts Options) *Transport {
	return &Transport{opts: opts.withDefaults()}
}

// Start implements [core.Transport]. It resolves the command, builds the
// scrubbed environment, and starts the server in its own process group
// and, on Linux, as the init of its own PID namespace (without one where
// the kernel refuses it). It returns once the process is running. ctx is
// checked before the process is started; cancelling it later has no effect
// on the instance.
//
// The returned instance is an *[Instance]. The caller owns it and must call
// Stop or Kill on it.
func (t *Transport) Start(ctx context.Context, spec core.ServerSpec) (core.Instance, error) {
	if !platformSupported {
		return nil, fmt.Errorf("extension %q: %w", spec.Name, ErrUnsupportedPlatform)
	}
	if spec.Name == "" {
		return nil, fmt.Errorf("stdio: %w (command %q); set core.ServerSpec.Name", ErrNoName, spec.Command)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("extension %q: start cancelled: %w", spec.Name, err)
	}
	opts := t.opts.withDefaults()

	env, secrets, err := buildEnv(spec.Name, opts.Environ(), opts.BaseEnvAllowlist, spec.Env)
	if err != nil {
		return nil, err
	}
	path, err := resolveCommand(spec, lookupEnv(env, "PATH"))
	if err != nil {
		return nil, err
	}
	dir := spec.Dir
	if dir == "" {
		dir = spec.PackageDir
	}
	if dir != "" {
		if dir, err = filepath.Abs(dir); err != nil {
			return nil, fmt.Errorf("extension %q: resolve working directory: %w", spec.Name, err)
		}
	}

	args := append([]string{spec.Command}, spec.Args...)
	// A confined server starts as the launcher, which applies the
	// sandbox and execs path (see sandbox.go).
	var confined *confinedStart
	if spec.Sandbox != nil {
		if confined, err = prepareConfined(spec, opts.Launcher, path, args, env); err != nil {
			return nil, err
		}
	}
	p, err := newProc(spec.Name, opts, secrets)
	if err != nil {
		if confined != nil {
			confined.abort()
		}
		return nil, err
	}
	p.newCmd = func(attr *syscall.SysProcAttr) *exec.Cmd {
		cmd := &exec.Cmd{
			Path:        path,
			Args:        args,
			Env:         env,
			Dir:         dir,
			Stdin:       p.childIn,
			Stdout:      p.childOut,
			Stderr:      p.childErr,
			SysProcAttr: attr,
		}
		if confined != nil {
			c := confined.cmd
			cmd.Path, cmd.Args, cmd.Env, cmd.ExtraFiles = c.Path, c.Args, c.Env, c.ExtraFiles
		}
		return cmd
	}
	if confined != nil {
		tmp := confined.tmpDir
		p.cleanup = func() { os.RemoveAll(tmp) }
	}
	if err := p.start(); err != nil {
		if confined != nil {
			confined.abort()
		}
		return nil, fmt.Errorf("extension %q: start %s: %w; check that it is a program this system can run", spec.Name, path, err)
	}
	if confined != nil {
		if err := confined.cmd.Started(); err != nil {
			p.kill()
			return nil, fmt.Errorf("extension %q: start %s in its sandbox: %w", spec.Name, path, err)
		}
		p.log.Debug("server sandboxed", "sandbox", confine.Check(spec.Sandbox).String(), "origin", spec.Sandbox.Origin)
	}
	p.log.Debug("server started", "pid", p.pid, "path", path, "dir", dir, "pid_namespace", p.pidns)
	h := &Instance{p: p}
	runtime.AddCleanup(h, (*proc).abandon, p)
	return h, nil
}

// Resolve returns the absolute path of the executable Start would run for
// spec: a bare name from the package's bin/ directory first, then from the
// PATH of the server's scrubbed environment; a relative path below the
// package directory. Its errors are Start's (command not found, not
// executable, outside the package), naming the extension. A transport that
// checks what it is about to execute (the go-plugin transport checksums
// it) resolves with Resolve and then starts that absolute path.
func (t *Transport) Resolve(spec core.ServerSpec) (string, error) {
	opts := t.opts.withDefaults()
	env, _, err := buildEnv(spec.Name, opts.Environ(), opts.BaseEnvAllowlist, spec.Env)
	if err != nil {
		return "", err
	}
	return resolveCommand(spec, lookupEnv(env, "PATH"))
}

// newProc creates the pipes and the bookkeeping of one instance.
func newProc(name string, opts Options, secrets []string) (*proc, error) {
	var files [6]*os.File
	closeAll := func() {
		for _, f := range files {
			if f != nil {
				f.Close()
			}
		}
	}
	// files[0] is the child's stdin and files[1] ours; then stdout (ours,
	// the child's) and stderr (ours, the child's).
	for i := 0; i < 6; i += 2 {
		child, ours, err := childPipe(i == 0)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("extension %q: create pipe: %w", name, err)
		}
		if i == 0 {
			files[i], files[i+1] = child, ours
		} else {
			files[i], files[i+1] = ours, child
		}
	}
	log := opts.Logger.Named(name)
	tl := stderrpump.NewTail(opts.StderrLines)
	return &proc{
		name:        name,
		log:         log,
		termGrace:   opts.TermGrace,
		stderrDrain: opts.StderrDrain,
		childIn:     files[0], stdin: files[1],
		stdout: files[2], childOut: files[3],
		stderr: files[4], childErr: files[5],
		tail: tl,
		pump: &stderrpump.Pump{
			R:       files[4],
			Log:     log,
			Level:   opts.StderrLevel,
			MaxLine: opts.StderrLineBytes,
			Limiter: rate.NewLimiter(rate.Limit(opts.StderrRate), opts.StderrBurst),
			Redact:  stderrpump.NewRedactor(secrets),
			Tail:    tl,
		},
		pumpDone: make(chan struct{}),
		done:     make(chan struct{}),
	}, nil
}
