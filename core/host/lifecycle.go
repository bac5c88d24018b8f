package host

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"yolop.dev/core"
	"yolop.dev/core/internal/ratelimit"
	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/yep"
)

// Start spawns the server and runs the handshake if it is not running.
// When the extension refuses calls, or this start makes it refuse them, the
// error matches [ErrExtensionOff], [ErrExtensionDegraded] or
// [ErrExtensionClosed], and the cause.
func (e *Extension) Start(ctx context.Context) error {
	_, err := e.ensure(ctx)
	return e.scrubError(err)
}

// ensure returns a running, handshaken process, starting one if needed.
func (e *Extension) ensure(ctx context.Context) (*process, error) {
	for {
		e.mu.Lock()
		switch {
		case e.closed:
			e.mu.Unlock()
			return nil, fmt.Errorf("extension %q: %w", e.grant.Name, ErrExtensionClosed)
		case e.proc != nil:
			p := e.proc
			probing := p.probing
			e.mu.Unlock()
			if probing != nil {
				// A cooperative server is being probed after a cancel: the
				// probe keeps it or restarts it.
				select {
				case <-probing:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			select {
			case <-p.conn.Done():
				// The server just died: wait until watch has recorded the
				// crash, then start over (respawn or report the state).
				select {
				case <-p.exited:
					continue
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			default:
			}
			return p, nil
		case e.state == StateOff || e.state == StateDegraded:
			sentinel := ErrExtensionDegraded
			if e.state == StateOff {
				sentinel = ErrExtensionOff
			}
			err := newError(sentinel, e.cause, "extension %q is %s: %s", e.grant.Name, e.state, e.reason)
			e.mu.Unlock()
			return nil, err
		case e.starting != nil:
			ch := e.starting
			e.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		wait := time.Until(e.notBefore)
		ch := make(chan struct{})
		e.starting = ch
		respawn := e.state == StateCrashed
		e.state = StateStarting
		e.mu.Unlock()

		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				e.mu.Lock()
				e.starting = nil
				e.state = StateCrashed
				e.mu.Unlock()
				close(ch)
				return nil, ctx.Err()
			}
		}
		p, err := e.spawn(ctx)
		e.mu.Lock()
		e.starting = nil
		if err == nil && e.closed {
			err = fmt.Errorf("extension %q: %w", e.grant.Name, ErrExtensionClosed)
			go e.stopProcess(p)
		}
		if err != nil {
			if e.state == StateStarting {
				if ctx.Err() != nil {
					e.state = StateIdle // the caller gave up; not the server's fault
				} else {
					e.state = StateDegraded
					e.reason, e.cause = e.scrub(err.Error()), err
					if !errors.Is(err, ErrExtensionDegraded) && !errors.Is(err, ErrExtensionClosed) {
						err = newError(ErrExtensionDegraded, err, "%s", err.Error())
					}
					defer e.lifecycle(yep.EventExtensionDegraded, 0, err)
				}
			}
			e.mu.Unlock()
			close(ch)
			return nil, err
		}
		e.proc = p
		e.contrib = p.contrib
		e.state = StateReady
		e.reason, e.cause = "", nil
		e.mu.Unlock()
		close(ch)
		if respawn {
			e.lifecycle(yep.EventExtensionRestarted, p.inst.PID(), nil)
		} else {
			e.lifecycle(yep.EventExtensionStarted, p.inst.PID(), nil)
		}
		return p, nil
	}
}

// spawn starts a process and runs the handshake.
func (e *Extension) spawn(ctx context.Context) (*process, error) {
	e.mu.Lock()
	spec := e.grant.Server
	spec.Env = maps.Clone(spec.Env)
	// A sandbox mount of the workspace follows workspace/changed at the
	// next start.
	spec.Mounts = core.ExpandMounts(spec.Mounts, e.workspace)
	spec.Sandbox = core.ExpandSandbox(spec.Sandbox, e.workspace)
	config := e.grant.Config
	verify := e.grant.Verify
	e.mu.Unlock()
	if verify != nil {
		if err := verify(); err != nil {
			e.log.Warn("not starting the server: it no longer matches its approval", "error", err)
			return nil, fmt.Errorf("extension %q not started: %w", e.grant.Name, err)
		}
	}
	inst, err := e.opts.Transport.Start(ctx, spec)
	if err != nil {
		if strings.HasPrefix(err.Error(), fmt.Sprintf("extension %q", e.grant.Name)) {
			return nil, err // the transport's error names the extension already
		}
		return nil, fmt.Errorf("starting extension %q: %w", e.grant.Name, err)
	}
	// The handshake timeout runs from the moment the server runs: what
	// the transport does before (a WASM compile, a go-plugin launch) is
	// host work bounded by ctx and the transport, and a loaded machine
	// must not turn it into a degraded extension. ErrHandshakeTimeout is
	// the cause when this timeout expires, as opposed to ctx ending.
	ctx, cancel := context.WithTimeoutCause(ctx, e.opts.HandshakeTimeout, ErrHandshakeTimeout)
	defer cancel()
	p := &process{inst: inst, exited: make(chan struct{}), logs: ratelimit.New(jsonrpc.DefaultWarnBurst, jsonrpc.DefaultWarnInterval)}
	p.conn = jsonrpc.NewConn(inst.Stdout(), inst.Stdin(), jsonrpc.Options{
		Handler:  e.reverseHandler(p),
		Logger:   e.log,
		Closer:   inst.Stdin(),
		PeerGone: func(readErr error) error { return e.exitCause(inst, readErr) },

		MaxViolations:   e.opts.MaxProtocolViolations,
		ViolationWindow: e.opts.ProtocolViolationWindow,
		OnViolation:     func() { e.stats.add(func(c *counters) { c.violations++ }) },
	})

	e.mu.Lock()
	workspace := e.workspace
	e.mu.Unlock()
	hostCaps := yep.Capabilities{yep.CapTools, yep.CapStreaming, yep.CapHooks, yep.CapPrompt, yep.CapDynamicPrompt,
		yep.CapCommands, yep.CapCancel, yep.CapLog, yep.CapConfig, yep.CapWorkspace, yep.CapMCPServers}
	if e.grant.UIAsk {
		hostCaps = append(hostCaps, yep.CapUIAsk)
	}
	if e.grant.Status {
		hostCaps = append(hostCaps, yep.CapStatus)
	}
	if e.grant.Trace {
		hostCaps = append(hostCaps, yep.CapTrace)
	}
	params := yep.InitializeParams{
		ProtocolVersion: yep.ProtocolVersion,
		SessionID:       e.opts.SessionID,
		WorkspaceRoot:   workspace,
		Locale:          e.opts.Locale,
		Config:          config,
		Capabilities:    hostCaps,
	}
	var res yep.InitializeResult
	if err := p.conn.Call(ctx, yep.MethodInitialize, params, &res); err != nil {
		e.kill(p)
		switch {
		case errors.Is(err, yep.ErrCancelled) && context.Cause(ctx) == ErrHandshakeTimeout:
			return nil, newError(ErrHandshakeTimeout, nil, "extension %q did not answer initialize within %s", e.grant.Name, e.opts.HandshakeTimeout)
		case errors.As(err, new(*jsonrpc.ProtocolError)):
			var pe *jsonrpc.ProtocolError
			errors.As(err, &pe)
			return nil, newError(ErrExtensionDegraded, err, "extension %q %s", e.grant.Name, e.protocolReason(pe))
		case errors.As(err, new(*jsonrpc.InvalidResponseError)):
			var ire *jsonrpc.InvalidResponseError
			errors.As(err, &ire)
			return nil, e.invalidResponse(ire)
		case errors.As(err, new(*jsonrpc.ClosedError)):
			var ce *jsonrpc.ClosedError
			errors.As(err, &ce)
			return nil, fmt.Errorf("extension %q exited during initialize: %w", e.grant.Name, ce.Cause)
		}
		return nil, fmt.Errorf("extension %q: initialize: %w", e.grant.Name, err)
	}
	v, err := yep.Negotiate(yep.Current, res.ProtocolVersion)
	if err != nil {
		e.kill(p)
		e.mu.Lock()
		e.state = StateOff
		e.reason, e.cause = fmt.Sprintf("server speaks %v; extension left off", err), err
		e.mu.Unlock()
		e.log.Warn("protocol version mismatch; extension left off", "error", err)
		return nil, newError(ErrExtensionOff, err, "extension %q: %v", e.grant.Name, err)
	}
	p.contrib = clamp(&e.grant, &res, v)
	for _, r := range p.contrib.refusals {
		e.log.Warn("handshake wider than the approved manifest", "refused", r.String())
	}
	for _, w := range p.contrib.warnings {
		e.log.Debug(w)
	}
	if err := p.conn.Notify(ctx, yep.MethodInitialized, yep.InitializedParams{}); err != nil {
		e.kill(p)
		return nil, fmt.Errorf("extension %q: initialized: %w", e.grant.Name, err)
	}
	go e.watch(p)
	return p, nil
}

// exitCause waits briefly for the process to end and returns its exit
// error, so pending calls fail naming the exit status and stderr.
func (e *Extension) exitCause(inst core.Instance, readErr error) error {
	select {
	case <-inst.Done():
	case <-time.After(2 * time.Second):
		return fmt.Errorf("extension %q closed its output (%v)", e.grant.Name, readErr)
	}
	if err := inst.Err(); err != nil {
		return err
	}
	return fmt.Errorf("extension %q exited (exit status 0)", e.grant.Name)
}

// watch waits for a process's connection to end and records a crash unless
// the stop was intentional.
func (e *Extension) watch(p *process) {
	<-p.conn.Done()
	_ = p.inst.Kill()
	p.conn.Wait()
	e.flushServerLogs(p)
	// exited closes after the crash is recorded (defers run last first),
	// so a caller that waits on it sees the new state.
	defer close(p.exited)
	var degraded error // reported once e.mu is released
	defer func() {
		if degraded != nil {
			e.lifecycle(yep.EventExtensionDegraded, p.inst.PID(), degraded)
		}
	}()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.proc == p {
		e.proc = nil
	}
	if p.stopping || e.closed {
		if e.state == StateReady {
			e.state = StateIdle
		}
		return
	}
	cause := p.conn.Err()
	var pe *jsonrpc.ProtocolError
	if errors.As(cause, &pe) {
		// Not a crash: the server is running but breaking the protocol, and
		// a respawn would do the same again.
		e.state = StateDegraded
		e.reason, e.cause = e.protocolReason(pe), pe
		e.log.Error("extension stopped and degraded", "reason", e.reason)
		degraded = errors.New(e.reason)
		return
	}
	now := time.Now()
	e.crashes = append(e.crashes, now)
	e.crashes = slices.DeleteFunc(e.crashes, func(t time.Time) bool { return now.Sub(t) > e.opts.CrashWindow })
	e.stats.add(func(c *counters) { c.restarts++ })
	e.log.Error("extension crashed", "error", e.scrub(fmt.Sprint(cause)))
	if len(e.crashes) >= e.opts.CrashLimit {
		e.state = StateDegraded
		e.reason = e.scrub(fmt.Sprintf("crashed %d times within %s; not restarting (last: %v). Fix the server, then reload the extension", len(e.crashes), e.opts.CrashWindow, cause))
		e.cause = cause
		degraded = errors.New(e.reason)
		return
	}
	backoff := e.opts.MinBackoff << (len(e.crashes) - 1)
	if backoff > e.opts.MaxBackoff || backoff <= 0 {
		backoff = e.opts.MaxBackoff
	}
	e.notBefore = now.Add(backoff)
	e.state = StateCrashed
	e.reason, e.cause = e.scrub(fmt.Sprint(cause)), cause
	if e.grant.eager() {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), backoff+e.opts.HandshakeTimeout)
			defer cancel()
			_, _ = e.ensure(ctx)
		}()
	}
}

// protocolReason says why a server that broke the protocol too often was
// stopped, and what to do about it.
func (e *Extension) protocolReason(pe *jsonrpc.ProtocolError) string {
	fix := "fix the messages the server writes to stdout (see the YEP protocol reference)"
	if pe.NotJSON {
		fix = "fix the server's stdout (only protocol JSON may go there)"
	}
	return e.scrub(fmt.Sprintf("%v; %s, then reload the extension", pe, fix))
}

func (e *Extension) kill(p *process) {
	p.conn.Close()
	_ = p.inst.Kill()
	p.conn.Wait()
}

// stopProcess runs the graceful path: shutdown, exit, close stdin, then the
// transport's staged stop.
func (e *Extension) stopProcess(p *process) {
	e.mu.Lock()
	p.stopping = true
	e.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), e.opts.StopGrace)
	_ = p.conn.Call(ctx, yep.MethodShutdown, yep.ShutdownParams{}, nil)
	_ = p.conn.Notify(ctx, yep.MethodExit, yep.ExitParams{})
	cancel()
	_ = p.inst.Stdin().Close()
	_ = p.inst.Stop(e.opts.StopGrace)
	p.conn.Close()
	<-p.exited
}

// Stop stops the running server gracefully, if any. The next call starts
// it again.
func (e *Extension) Stop() {
	e.mu.Lock()
	p := e.proc
	e.proc = nil
	if p != nil {
		p.stopping = true
	}
	e.mu.Unlock()
	if p != nil {
		e.stopProcess(p)
	}
}

// Reload restarts the server process in place, within the same grant: the
// approved surface never changes. It also clears a degraded state.
func (e *Extension) Reload(ctx context.Context) error {
	e.Stop()
	e.mu.Lock()
	if e.state != StateOff {
		e.state = StateIdle
		e.reason, e.cause = "", nil
	}
	e.crashes = nil
	e.notBefore = time.Time{}
	e.mu.Unlock()
	e.stats.add(func(c *counters) { c.restarts++ })
	_, err := e.ensure(ctx)
	return err
}

// Close stops the server and releases the extension. It is idempotent.
func (e *Extension) Close() {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	e.closed = true
	starting := e.starting
	e.mu.Unlock()
	if starting != nil {
		<-starting
	}
	if e.traces != nil {
		// Deliver the trace events already queued (the last turn's,
		// session.completed) before the server is told to shut down, so a
		// trace consumer exports them in its final flush. A server that
		// does not read holds this for at most the stop grace.
		e.traces.close()
		grace := time.NewTimer(e.opts.StopGrace)
		select {
		case <-e.traces.done:
		case <-grace.C:
		}
		grace.Stop()
	}
	e.Stop()
	e.probes.Wait() // the connection is closed: a pending probe returns
	if e.traces != nil {
		<-e.traces.done // the connection is closed: a blocked send fails
	}
}

// lifecycle reports one change of the server's life, when the extension
// belongs to a session. Call it without e.mu held.
func (e *Extension) lifecycle(typ string, pid int, err error) {
	if e.opts.emit == nil {
		return
	}
	d := yep.ExtensionData{Extension: e.grant.Name, PID: pid}
	if err != nil {
		d.Error = e.scrub(err.Error())
	}
	e.opts.emit(Event{Type: typ, Data: d})
}
