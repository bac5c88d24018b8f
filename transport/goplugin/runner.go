package goplugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"

	"yolop.dev/core"
	"yolop.dev/transport/stdio"
)

// A procRunner is the go-plugin runner.Runner of one plugin: go-plugin
// drives the handshake, and the process is a transport/stdio instance, so
// a plugin runs exactly as a stdio server does (scrubbed environment,
// process group, PID namespace, parent-death signal, staged stop, stderr
// logged with a rate limit and kept as a tail).
type procRunner struct {
	stdio    *stdio.Transport
	spec     core.ServerSpec // Command is the resolved absolute path
	checksum []byte          // nil when nothing is pinned

	mu          sync.Mutex
	env         map[string]string // go-plugin's variables, from its cmd
	socketDir   string            // go-plugin's directory for the plugin's socket
	inst        *stdio.Instance   // nil until started
	cancelled   bool              // kill came before the start
	handshook   bool              // the go-plugin handshake completed
	exitedAlone bool              // the process had exited when go-plugin killed it
	startErr    error             // the runner's own start failure (checksum, exec)

	stdoutRead atomic.Int64 // bytes go-plugin has read from the plugin's stdout
}

var _ runner.Runner = (*procRunner)(nil)

// runnerFunc is go-plugin's ClientConfig.RunnerFunc. With SkipHostEnv,
// cmd.Env holds exactly the variables go-plugin sets for the plugin (the
// magic cookie, the protocol versions, the client certificate, the socket
// directory): they are added to the spec's, never the host's environment.
func (r *procRunner) runnerFunc(_ hclog.Logger, cmd *exec.Cmd, socketDir string) (runner.Runner, error) {
	env := maps.Clone(r.spec.Env)
	if env == nil {
		env = map[string]string{}
	}
	for _, kv := range cmd.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	r.mu.Lock()
	r.env, r.socketDir = env, socketDir
	r.mu.Unlock()
	return r, nil
}

// Start implements runner.Runner: it checks the executable against its
// pinned SHA-256 with go-plugin's SecureConfig (go-plugin cannot, as it
// only sees a runner), then starts it with the stdio transport. go-plugin
// SecureConfig's caveat holds: the file can still change between the check
// and the exec.
func (r *procRunner) Start(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancelled {
		return fmt.Errorf("extension %q: start cancelled", r.spec.Name)
	}
	if r.checksum != nil {
		h := sha256.New()
		sc := &goplugin.SecureConfig{Checksum: r.checksum, Hash: h}
		ok, err := sc.Check(r.spec.Command)
		switch {
		case err != nil:
			r.startErr = fmt.Errorf("extension %q: checksumming %s: %w", r.spec.Name, r.spec.Command, err)
		case !ok:
			r.startErr = fmt.Errorf("extension %q: refusing to start %s: %w (%w): its SHA-256 is %s, the approval pinned %s; the file changed after it was approved, and runs again once the approved file is back or the package is approved again",
				r.spec.Name, r.spec.Command, ErrChecksumMismatch, goplugin.ErrChecksumsDoNotMatch, hex.EncodeToString(h.Sum(nil)), hex.EncodeToString(r.checksum))
		}
		if r.startErr != nil {
			return r.startErr
		}
	}
	spec := r.spec
	spec.Env = r.env
	if spec.Sandbox != nil && r.socketDir != "" {
		// A sandboxed plugin creates its gRPC socket in go-plugin's
		// socket directory: grant it, and nothing else more.
		sb := *spec.Sandbox
		sb.Paths = append(slices.Clone(sb.Paths), core.ConfinedPath{Path: r.socketDir, Write: true})
		spec.Sandbox = &sb
	}
	inst, err := r.stdio.Start(ctx, spec)
	if err != nil {
		r.startErr = err
		return err
	}
	r.inst = inst.(*stdio.Instance)
	return nil
}

// instance returns the process, or nil before it started.
func (r *procRunner) instance() *stdio.Instance {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.inst
}

// cancel kills the process, or stops it from starting: Start's context
// ended during the handshake.
func (r *procRunner) cancel() {
	r.mu.Lock()
	r.cancelled = true
	inst := r.inst
	r.mu.Unlock()
	if inst != nil {
		_ = inst.Kill()
	}
}

// Diagnose implements runner.Runner; Start's error says what went wrong.
func (r *procRunner) Diagnose(context.Context) string { return "" }

// Stdout implements runner.Runner: go-plugin reads the handshake line
// from it, then discards what follows (YEP runs over gRPC). The bytes read
// are counted, so that a failed handshake can tell output that is no
// handshake from no output at all.
func (r *procRunner) Stdout() io.ReadCloser {
	return io.NopCloser(countingReader{r: r.instance().Stdout(), n: &r.stdoutRead})
}

// stdoutBytes is how many bytes go-plugin has read from the plugin's
// stdout.
func (r *procRunner) stdoutBytes() int64 { return r.stdoutRead.Load() }

// A countingReader adds the bytes read through it to n.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n.Add(int64(k))
	return k, err
}

// Stderr implements runner.Runner with an empty stream: the stdio
// transport already logs the plugin's stderr and keeps its tail.
func (r *procRunner) Stderr() io.ReadCloser { return io.NopCloser(strings.NewReader("")) }

// Name implements runner.Runner.
func (r *procRunner) Name() string { return r.spec.Name }

// Wait implements runner.Runner. It returns nil whatever the exit: the
// instance's Err reports it, naming the extension, and go-plugin would
// only log it again.
func (r *procRunner) Wait(context.Context) error {
	if inst := r.instance(); inst != nil {
		<-inst.Done()
	}
	return nil
}

// Kill implements runner.Runner: go-plugin kills a plugin whose handshake
// failed at once, and one that did not stop when asked to shut down; the
// stdio transport's staged stop does the latter (SIGTERM to the process
// group, TermGrace, SIGKILL), the former is killed outright.
func (r *procRunner) Kill(context.Context) error {
	inst := r.instance()
	if inst == nil {
		return nil
	}
	r.mu.Lock()
	handshook := r.handshook
	select {
	case <-inst.Done():
		r.exitedAlone = !r.cancelled
		r.mu.Unlock()
		return nil
	default:
	}
	r.mu.Unlock()
	if !handshook {
		_ = inst.Kill()
		return nil
	}
	_ = inst.Stop(0)
	return nil
}

// shookHands records that the handshake completed: from now on Kill is a
// staged stop.
func (r *procRunner) shookHands() {
	r.mu.Lock()
	r.handshook = true
	r.mu.Unlock()
}

// markExitedAlone records that the process exited before the host
// stopped it.
func (r *procRunner) markExitedAlone() {
	r.mu.Lock()
	r.exitedAlone = true
	r.mu.Unlock()
}

// exitedOnItsOwn reports whether the process had exited before go-plugin
// killed it, and how.
func (r *procRunner) exitedOnItsOwn() (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.inst == nil || !r.exitedAlone {
		return false, nil
	}
	return true, r.inst.Err()
}

// ID implements runner.Runner: the pid, or "" before the start.
func (r *procRunner) ID() string {
	if inst := r.instance(); inst != nil {
		return strconv.Itoa(inst.PID())
	}
	return ""
}

// PluginToHost implements runner.AddrTranslator: the plugin shares the
// host's filesystem, so its socket path is the host's.
func (r *procRunner) PluginToHost(network, addr string) (string, string, error) {
	return network, addr, nil
}

// HostToPlugin implements runner.AddrTranslator.
func (r *procRunner) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}

// removeSocketDir removes go-plugin's socket directory, which go-plugin
// leaves behind when the runner failed to start.
func (r *procRunner) removeSocketDir() {
	r.mu.Lock()
	dir := r.socketDir
	r.mu.Unlock()
	if dir != "" {
		_ = os.RemoveAll(dir)
	}
}
