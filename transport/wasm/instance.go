package wasm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"
	"golang.org/x/time/rate"

	"yolop.dev/core"
	"yolop.dev/internal/stderrpump"
)

// An Instance is one running guest; it implements [core.Instance]. It is a
// thin handle over the state its goroutines share, so that the handle can
// become unreachable, and trigger the kill-on-drop safety net, while they
// run.
type Instance struct {
	p *proc
}

var _ core.Instance = (*Instance)(nil)

// Stdout implements [core.Instance]: what the guest writes to its file
// descriptor 1. After Stop or Kill has returned, reads return io.EOF;
// bytes the reader had not consumed by then are discarded.
func (h *Instance) Stdout() io.Reader { return &stdoutReader{h: h} }

// Stdin implements [core.Instance]: what the guest reads from its file
// descriptor 0. Closing it is the end of the guest's input; writes after
// the guest is gone fail with an error.
func (h *Instance) Stdin() io.WriteCloser { return &stdinWriter{h: h} }

// Stop implements [core.Instance]: it closes stdin, waits up to grace for
// the guest to end on its own, and then closes the module, which ends a
// running guest at its next function call or loop iteration and a waiting
// one at once (there are no signals, so no SIGTERM stage). It returns,
// with the same value as Err, once the guest has ended and every goroutine
// of the instance has finished.
func (h *Instance) Stop(grace time.Duration) error { return h.p.stop(grace) }

// Kill implements [core.Instance]: it closes the module at once and
// returns, with the same value as Err, once the guest has ended and every
// goroutine of the instance has finished.
func (h *Instance) Kill() error { return h.p.kill() }

// Done implements [core.Instance]: it is closed when the guest has ended
// and its module has been released.
func (h *Instance) Done() <-chan struct{} { return h.p.done }

// Err implements [core.Instance]. It is nil before Done is closed, and
// after the guest returned from main or called exit(0). Otherwise
// [errors.As] finds a *[core.ExitError] in it:
//
//   - exit(n) with n ≠ 0: the *core.ExitError itself, with Code n;
//   - closed by Kill, or by Stop after its grace: Code -1 and Signal
//     [SignalKill];
//   - a trap: a *[TrapError] around Code -1 and Signal [SignalTrap];
//   - after a memory grow past the cap was refused: a *[MemoryLimitError]
//     around whichever of the above ended it.
//
// Every form carries the stderr tail.
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

// PID implements [core.Instance]. A guest is no process of its own: it is
// always 0.
func (h *Instance) PID() int { return 0 }

// Cooperative implements [core.Cooperative]: a guest runs on one thread
// with no preemption, so one stuck in a loop reads nothing until it is
// stopped.
func (h *Instance) Cooperative() bool { return true }

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

// A proc is the shared state of one instance.
type proc struct {
	name   string
	log    hclog.Logger
	forget func() // drops the instance from its Transport's list

	cap   *memoryCap
	mod   api.Module
	start api.Function // the module's _start
	roots []*os.Root

	// Our ends of the pipes, and the guest's ends (closed once it ends).
	stdin, stdout, stderr       *os.File
	childIn, childOut, childErr *os.File

	tail     *stderrpump.Tail
	pump     *stderrpump.Pump
	pumpDone chan struct{}

	cancel context.CancelFunc // ends the guest's call
	wake   chan struct{}      // closed on kill: ends a guest's sleep
	mu     sync.Mutex         // guards killed against ended
	killed bool               // the host closed the guest before it ended
	ended  bool

	stdinOnce    sync.Once
	stdinErr     error
	stdoutOnce   sync.Once
	stdoutClosed atomic.Bool
	killOnce     sync.Once

	wg   sync.WaitGroup // the runner and the stderr pump
	done chan struct{}
	err  error // written before done is closed
}

// newProc creates the pipes and the bookkeeping of one instance.
func newProc(spec core.ServerSpec, opts Options, secrets []string, limit uint64) (*proc, error) {
	var files [6]*os.File
	for i := 0; i < 6; i += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			for _, f := range files {
				if f != nil {
					f.Close()
				}
			}
			return nil, fmt.Errorf("extension %q: create pipe: %w", spec.Name, err)
		}
		files[i], files[i+1] = r, w
	}
	log := opts.Logger.Named(spec.Name)
	tl := stderrpump.NewTail(opts.StderrLines)
	return &proc{
		name:    spec.Name,
		log:     log,
		forget:  func() {},
		cap:     &memoryCap{limit: limit},
		childIn: files[0], stdin: files[1],
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
		wake:     make(chan struct{}),
		done:     make(chan struct{}),
	}, nil
}

// release closes what newProc and Start opened, for an instance that never
// ran.
func (p *proc) release() {
	for _, f := range []*os.File{p.stdin, p.stdout, p.stderr, p.childIn, p.childOut, p.childErr} {
		f.Close()
	}
	for _, r := range p.roots {
		r.Close()
	}
}

// instantiate instantiates m; nothing of the guest runs yet.
func (p *proc) instantiate(m *module, cfg wazero.ModuleConfig) error {
	ictx := experimental.WithMemoryAllocator(context.Background(), p.cap)
	mod, err := m.runtime.InstantiateModule(ictx, m.compiled, cfg)
	if err != nil {
		return fmt.Errorf("%w: instantiate: %v", ErrNotCommand, err)
	}
	if n := p.cap.refused.Load(); n != 0 {
		mod.Close(context.Background())
		return fmt.Errorf("%w: it needs %s of memory at start, over the cap of %s; raise MaxMemoryMB", ErrMemoryCap, mib(n), mib(p.cap.limit))
	}
	start := mod.ExportedFunction("_start")
	if start == nil {
		mod.Close(context.Background())
		return fmt.Errorf("%w: it exports no _start function", ErrNotCommand)
	}
	p.mod, p.start = mod, start
	return nil
}

// launch starts the runner, which calls _start, and the stderr pump.
func (p *proc) launch() {
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	p.wg.Add(2)
	go p.run(ctx, p.start)
	go func() {
		defer p.wg.Done()
		defer close(p.pumpDone)
		defer p.stderr.Close()
		p.pump.Run()
	}()
}

// handle returns the instance's handle, with the kill-on-drop cleanup.
func (p *proc) handle() *Instance {
	h := &Instance{p: p}
	runtime.AddCleanup(h, (*proc).abandon, p)
	return h
}

// run calls _start, then records how the guest ended and releases it.
func (p *proc) run(ctx context.Context, start api.Function) {
	defer p.wg.Done()
	_, callErr := start.Call(ctx)
	p.mu.Lock()
	p.ended = true
	killed := p.killed
	p.mu.Unlock()

	// The guest is gone: closing its ends makes our ends see EOF once
	// drained, and writes to its stdin fail.
	p.childOut.Close()
	p.childErr.Close()
	p.childIn.Close()
	<-p.pumpDone
	p.mod.Close(context.Background())
	p.cancel()
	for _, r := range p.roots {
		r.Close()
	}

	p.err = p.exitError(callErr, killed)
	if p.err != nil {
		p.log.Debug("guest ended", "error", p.err)
	} else {
		p.log.Debug("guest ended cleanly")
	}
	p.forget()
	close(p.done)
}

// exitError describes how the guest ended: nil for exit status 0.
func (p *proc) exitError(callErr error, killed bool) error {
	ee := &core.ExitError{Name: p.name, Stderr: p.tail.Snapshot()}
	var err error = ee
	var se *sys.ExitError
	switch {
	case killed:
		ee.Code, ee.Signal = -1, SignalKill
	case callErr == nil:
		err = nil
	case errors.As(callErr, &se):
		if se.ExitCode() == 0 {
			err = nil
		}
		ee.Code = int(int32(se.ExitCode()))
	default:
		ee.Code, ee.Signal = -1, SignalTrap
		err = &TrapError{Exit: ee, Trap: callErr.Error()}
	}
	if n := p.cap.refused.Load(); n != 0 && !killed {
		if err == nil {
			// It coped with the refusal and ended well.
			return nil
		}
		err = &MemoryLimitError{Name: p.name, Limit: p.cap.limit, Requested: n, Err: err}
	}
	return err
}

// sleep is the guest's clock sleep (poll_oneoff with only a timeout): a
// real sleep, cut short when the instance is killed.
func (p *proc) sleep(ns int64) {
	if ns <= 0 {
		return
	}
	t := time.NewTimer(time.Duration(ns))
	select {
	case <-t.C:
	case <-p.wake:
		t.Stop()
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

// terminate ends the guest without waiting: it marks the end as the
// host's doing (unless the guest has already ended), cancels its call,
// which closes the module at the guest's next function call or loop
// iteration, and wakes it from anything it may be waiting in: a sleep, a
// read of stdin (its writer closes), a write to a full stdout (its reader
// closes). It does not block.
func (p *proc) terminate() {
	p.killOnce.Do(func() {
		p.mu.Lock()
		if !p.ended {
			p.killed = true
		}
		p.mu.Unlock()
		p.cancel()
		close(p.wake)
		p.closeStdin()
		p.closeStdout()
	})
}

// waitDone waits up to d for the guest to end.
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
		p.log.Debug("guest did not end after stdin was closed; closing it", "grace", grace)
		p.terminate()
	}
	return p.finish()
}

func (p *proc) kill() error {
	p.terminate()
	return p.finish()
}

// finish waits for the guest's end and for every goroutine, then closes
// stdout.
func (p *proc) finish() error {
	<-p.done
	p.wg.Wait()
	p.closeStdout()
	return p.err
}

// abandon is the kill-on-drop safety net, run by the runtime when the
// Instance handle and its streams have become unreachable. It must not
// block.
func (p *proc) abandon() {
	select {
	case <-p.done:
	default:
		p.log.Warn("guest instance was dropped without Stop or Kill; closing it (the owner must stop its instances)")
		p.terminate()
	}
	p.closeStdin()
	p.closeStdout()
}
