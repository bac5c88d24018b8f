package stdio

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core"
	"yolop.dev/internal/stderrpump"
)

// An Instance is one running server process; it implements
// [core.Instance]. It is a thin handle: the process state lives in a proc
// that the instance's goroutines share, so that the handle can become
// unreachable, and trigger the kill-on-drop safety net, while they run.
type Instance struct {
	p *proc
}

var _ core.Instance = (*Instance)(nil)

// Stdout implements [core.Instance]. After Stop or Kill has returned, reads
// return io.EOF; bytes the reader had not consumed by then are discarded.
func (h *Instance) Stdout() io.Reader { return &stdoutReader{h: h} }

// Stdin implements [core.Instance]. Closing it closes the server's stdin;
// writes after the server is gone fail with an error.
func (h *Instance) Stdin() io.WriteCloser { return &stdinWriter{h: h} }

// Stop implements [core.Instance]: it closes stdin, waits up to grace for
// the process to exit, sends SIGTERM to its process group, waits up to the
// transport's TermGrace, then sends SIGKILL. (A server that would drop the
// SIGTERM as the init of its PID namespace gets SIGKILL at once; see the
// package doc.) It returns once the process is reaped, and in a PID
// namespace every descendant gone, and every goroutine of the instance has
// finished, with the same value as Err.
func (h *Instance) Stop(grace time.Duration) error { return h.p.stop(grace) }

// Kill implements [core.Instance]: it sends SIGKILL to the process group
// and returns, with the same value as Err, once the process is reaped (in
// a PID namespace, once every descendant is gone) and every goroutine of
// the instance has finished.
func (h *Instance) Kill() error { return h.p.kill() }

// Done implements [core.Instance].
func (h *Instance) Done() <-chan struct{} { return h.p.done }

// Err implements [core.Instance]: nil before Done is closed or after a
// clean exit, otherwise a *[core.ExitError] with the exit code or the
// signal's name (such as "SIGKILL") and the stderr tail.
func (h *Instance) Err() error {
	select {
	case <-h.p.done:
		return h.p.err
	default:
		return nil
	}
}

// StderrTail implements [core.Instance]: the last stderr lines, oldest
// first, each capped and redacted as logged.
func (h *Instance) StderrTail() []string { return h.p.tail.Snapshot() }

// PID implements [core.Instance]: the server's pid as the host sees it,
// also when the server runs in a PID namespace of its own (where it is 1).
// The process's group id is the same.
func (h *Instance) PID() int { return h.p.pid }

// OwnPIDNamespace reports whether the server runs as the init of a PID
// namespace of its own (see the package doc). Pids of the host side then
// mean nothing to it: a protocol that hands the server the parent's pid to
// watch (LSP's initialize processId) must send none, or the server finds
// no such process and exits.
func (h *Instance) OwnPIDNamespace() bool { return h.p.pidns }

type stdoutReader struct{ h *Instance }

func (r *stdoutReader) Read(b []byte) (int, error) {
	p := r.h.p
	n, err := p.stdout.Read(b)
	if err != nil && errors.Is(err, os.ErrClosed) && p.stdoutClosed.Load() {
		err = io.EOF
	}
	return n, err
}

type stdinWriter struct{ h *Instance }

func (w *stdinWriter) Write(b []byte) (int, error) { return w.h.p.stdin.Write(b) }
func (w *stdinWriter) Close() error                { return w.h.p.closeStdin() }

// A proc is the shared state of one server process.
type proc struct {
	name        string
	log         hclog.Logger
	termGrace   time.Duration
	stderrDrain time.Duration
	// newCmd builds the command to start with the given attributes; the
	// waiter calls it once, or twice when the kernel refuses namespaces.
	newCmd func(*syscall.SysProcAttr) *exec.Cmd
	cmd    *exec.Cmd // set before start returns
	pid    int       // set before start returns
	pidns  bool      // the server is the init of its own PID namespace; set before start returns

	// Our ends of the pipes, and the child's ends (closed once started).
	stdin, stdout, stderr       *os.File
	childIn, childOut, childErr *os.File

	tail     *stderrpump.Tail
	pump     *stderrpump.Pump
	pumpDone chan struct{}

	mu     sync.Mutex // guards reaped against signalling a reused pid
	reaped bool

	stdinOnce    sync.Once
	stdinErr     error
	stdoutOnce   sync.Once
	stdoutClosed atomic.Bool

	// cleanup, if set, runs once the server is reaped (a confined
	// server's private temp directory is removed).
	cleanup func()

	wg   sync.WaitGroup // the waiter and the stderr pump
	done chan struct{}
	err  error // written before done is closed
}

// start launches the waiter, which starts the process, and then the stderr
// pump. It returns the start error, after which nothing runs.
func (p *proc) start() error {
	started := make(chan error, 1)
	p.wg.Add(1)
	go p.wait(started)
	err := <-started
	// The child has its copies (or there is no child): drop ours, so that
	// EOF on stdout and stderr means every writer is gone.
	p.childIn.Close()
	p.childOut.Close()
	p.childErr.Close()
	if err != nil {
		p.stdin.Close()
		p.stdout.Close()
		p.stderr.Close()
		p.wg.Wait()
		return err
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer close(p.pumpDone)
		defer p.stderr.Close()
		p.pump.Run()
	}()
	return nil
}

// wait starts the process, then is the one goroutine that reaps it. On
// Linux it stays locked to the thread that forked the child, so that the
// child's parent-death signal fires only when the host process dies.
func (p *proc) wait(started chan<- error) {
	defer p.wg.Done()
	if lockThread {
		runtime.LockOSThread()
		// Unlocked only after the reap: the thread may then be reused
		// or ended without touching the (gone) child.
		defer runtime.UnlockOSThread()
	}
	cmd, pidns, err := p.startCmd()
	p.newCmd = nil
	if err != nil {
		started <- err
		return
	}
	p.cmd, p.pid, p.pidns = cmd, cmd.Process.Pid, pidns
	started <- nil

	if waitExitedNoReap(p.pid) {
		// The leader is a zombie, so its group id is still ours: kill
		// whatever it left behind, then reap it.
		p.mu.Lock()
		signalGroup(p.pid, sigKill)
		_ = p.cmd.Wait()
		p.reaped = true
		p.mu.Unlock()
	} else {
		_ = p.cmd.Wait()
		p.mu.Lock()
		p.reaped = true
		p.mu.Unlock()
	}

	// Let the pump read what is left of stderr; if a descendant that
	// escaped the group still holds it open, stop waiting for it.
	timer := time.NewTimer(p.stderrDrain)
	select {
	case <-p.pumpDone:
	case <-timer.C:
		p.stderr.Close()
		<-p.pumpDone
	}
	timer.Stop()

	if p.cleanup != nil {
		p.cleanup()
	}
	p.err = p.exitError()
	if p.err != nil {
		p.log.Debug("server exited", "pid", p.pid, "error", p.err)
	} else {
		p.log.Debug("server exited cleanly", "pid", p.pid)
	}
	close(p.done)
}

// startCmd starts the server, in a PID namespace of its own unless they
// are off or have been refused. A namespaced start that fails as a refusal
// would is retried without namespaces: if that succeeds, the refusal is
// remembered for the rest of the process; if not, the command itself is at
// fault and the plain start's error is returned. A failed start ran none
// of the server's code, so retrying is safe.
func (p *proc) startCmd() (cmd *exec.Cmd, pidns bool, err error) {
	pidns = usePIDNamespace()
	cmd = p.newCmd(sysProcAttr(pidns))
	err = cmd.Start()
	if err == nil || !pidns || !nsRefusal(err) {
		return cmd, pidns, err
	}
	plain := p.newCmd(sysProcAttr(false))
	if perr := plain.Start(); perr != nil {
		return nil, false, perr
	}
	noteNSRefused(p.log, err)
	return plain, false, nil
}

// exitError describes the reaped process's end: nil for exit status 0.
func (p *proc) exitError() error {
	code, sig := exitStatus(p.cmd.ProcessState)
	if code == 0 && sig == "" {
		return nil
	}
	return &core.ExitError{Name: p.name, Code: code, Signal: sig, Stderr: p.tail.Snapshot()}
}

// signal sends sig to the process group, and to the leader itself in case
// it left the group, unless the process has been reaped (its pid may then
// belong to someone else).
func (p *proc) signal(sig os.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return
	}
	signalGroup(p.pid, sig)
	_ = p.cmd.Process.Signal(sig)
}

// terminate is Stop's SIGTERM step: SIGTERM to the process group and to
// the leader. The init of a PID namespace drops a SIGTERM it has no
// handler for, where any other process would die of it; for such a server
// terminate sends the leader SIGKILL as well, which is what SIGTERM's
// default action amounts to (the kernel then kills the rest of the
// namespace), instead of leaving it to run out TermGrace.
func (p *proc) terminate() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return
	}
	dropped := p.pidns && initDropsTerm(p.pid)
	signalGroup(p.pid, sigTerm)
	_ = p.cmd.Process.Signal(sigTerm)
	if dropped {
		p.log.Debug("server has no SIGTERM handler, and as the init of its PID namespace would not die of SIGTERM; sending SIGKILL, as SIGTERM's default action would have ended it")
		_ = p.cmd.Process.Signal(sigKill)
	}
}

func (p *proc) closeStdin() error {
	p.stdinOnce.Do(func() { p.stdinErr = p.stdin.Close() })
	return p.stdinErr
}

func (p *proc) closeStdout() {
	p.stdoutOnce.Do(func() {
		p.stdoutClosed.Store(true)
		p.stdout.Close()
	})
}

// waitDone waits up to d for the process to be reaped.
func (p *proc) waitDone(d time.Duration) bool {
	if d <= 0 {
		select {
		case <-p.done:
			return true
		default:
			return false
		}
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-p.done:
		return true
	case <-timer.C:
		return false
	}
}

func (p *proc) stop(grace time.Duration) error {
	p.closeStdin()
	if !p.waitDone(grace) {
		p.log.Debug("server did not exit after stdin was closed; sending SIGTERM", "grace", grace)
		p.terminate()
		if !p.waitDone(p.termGrace) {
			p.log.Warn("server ignored SIGTERM; sending SIGKILL", "term_grace", p.termGrace)
			p.signal(sigKill)
		}
	}
	return p.finish()
}

func (p *proc) kill() error {
	p.signal(sigKill)
	p.closeStdin()
	return p.finish()
}

// finish waits for the reap and for every goroutine, then closes stdout.
func (p *proc) finish() error {
	<-p.done
	p.wg.Wait()
	p.closeStdout()
	return p.err
}

// abandon is the kill-on-drop safety net, run by the runtime when the
// Instance handle and its streams have become unreachable. It must not
// block: the waiter and the pump finish on their own once the group is
// dead.
func (p *proc) abandon() {
	select {
	case <-p.done:
	default:
		p.log.Warn("server instance was dropped without Stop or Kill; killing it (the owner must stop its instances)", "pid", p.pid)
		p.signal(sigKill)
	}
	p.closeStdin()
	p.closeStdout()
}
