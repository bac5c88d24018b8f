package goplugin

import (
	"context"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"yolop.dev/core"
	"yolop.dev/transport/goplugin/internal/wire"
	"yolop.dev/transport/stdio"
)

// Handshake is the go-plugin handshake (magic cookie and protocol
// version) a plugin must answer; [yolop.dev/transport/goplugin/plugin]
// serves it.
var Handshake = wire.Handshake

// Options configure a [Transport]. Every field's zero value is a sensible
// default.
type Options struct {
	// Logger is the host logger. Each plugin's stderr is logged under a
	// sub-logger named after the extension, as for a stdio server, and
	// go-plugin's own messages under "<extension>.go-plugin", at debug
	// level (the transport reports every failure itself). Nil means
	// hclog.NewNullLogger().
	Logger hclog.Logger
	// Process configures the plugin processes exactly as stdio.Options
	// configures stdio servers: stderr capture and rate limit, the
	// environment allowlist, TermGrace. Its Logger is replaced by Logger.
	Process stdio.Options
	// StartTimeout bounds the go-plugin handshake, from the start of the
	// process to its handshake line; the context given to Start bounds it
	// too. Zero means [DefaultStartTimeout].
	StartTimeout time.Duration
}

// DefaultStartTimeout is how long a plugin has to print its handshake line
// when [Options].StartTimeout is zero: the bound docs/security.md promises
// for a server's start (go-plugin's own default is one minute).
const DefaultStartTimeout = 10 * time.Second

// A Transport is a [core.Transport] that runs each server as a go-plugin
// plugin and carries YEP over one gRPC stream. Create one with [New]. A
// Transport holds no state besides its options and may be used from many
// goroutines.
type Transport struct {
	opts  Options
	stdio *stdio.Transport
	log   hclog.Logger
}

var _ core.Transport = (*Transport)(nil)

// New returns a Transport with the given options.
func New(opts Options) *Transport {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	p := opts.Process
	p.Logger = opts.Logger
	return &Transport{opts: opts, stdio: stdio.New(p), log: opts.Logger}
}

// Start implements [core.Transport]. It resolves the command as the stdio
// transport does (the package's bin/ first, then the server's PATH),
// refuses an executable whose SHA-256 differs from spec.Checksum, starts
// it through go-plugin (magic cookie, protocol version, AutoMTLS), dials
// it and opens the YEP stream. It returns once the stream is open; ctx
// bounds all of that, and cancelling it later has no effect on the
// instance.
//
// The returned instance is an *[Instance]. The caller owns it and must call
// Stop or Kill on it.
func (t *Transport) Start(ctx context.Context, spec core.ServerSpec) (core.Instance, error) {
	if spec.Name == "" {
		return nil, fmt.Errorf("go-plugin: %w (command %q); set core.ServerSpec.Name", ErrNoName, spec.Command)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("extension %q: start cancelled: %w", spec.Name, err)
	}
	path, err := t.stdio.Resolve(spec)
	if err != nil {
		return nil, err
	}
	var checksum []byte
	if spec.Checksum != "" {
		if checksum, err = hex.DecodeString(spec.Checksum); err != nil || len(checksum) != 32 {
			return nil, fmt.Errorf("extension %q: %w: %q", spec.Name, ErrBadChecksum, spec.Checksum)
		}
	}
	spec.Command = path
	r := &procRunner{stdio: t.stdio, spec: spec, checksum: checksum}
	cfg := &goplugin.ClientConfig{
		HandshakeConfig:  wire.Handshake,
		Plugins:          goplugin.PluginSet{wire.PluginName: hostPlugin{}},
		RunnerFunc:       r.runnerFunc,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		AutoMTLS:         true,
		SkipHostEnv:      true,
		StartTimeout:     t.opts.StartTimeout,
		Logger:           quiet{t.log.Named(spec.Name).Named("go-plugin")},
	}
	client := goplugin.NewClient(cfg)

	var addr net.Addr
	started := make(chan error, 1)
	go func() {
		var err error
		addr, err = client.Start()
		started <- err
	}()
	select {
	case err = <-started:
	case <-ctx.Done():
		r.cancel()
		<-started
		err = fmt.Errorf("no handshake before the start was cancelled: %w", context.Cause(ctx))
	}
	if err != nil {
		return nil, t.failed(spec, r, client, err)
	}
	r.shookHands()

	conn, err := dial(addr, cfg.TLSConfig)
	if err != nil {
		return nil, t.failed(spec, r, client, fmt.Errorf("connecting: %w", err))
	}
	sctx, cancel := context.WithCancel(context.Background())
	stream, err := conn.NewStream(sctx, &wire.StreamDesc, wire.StreamMethod)
	if err != nil {
		cancel()
		conn.Close()
		return nil, t.failed(spec, r, client, fmt.Errorf("opening the YEP stream: %w", err))
	}
	inst := r.instance()
	t.log.Named(spec.Name).Debug("plugin started", "pid", inst.PID(), "path", path, "pinned", checksum != nil)
	return newInstance(t.log.Named(spec.Name), spec.Name, r, client, inst, conn, stream, cancel), nil
}

// dial connects to the plugin at addr with the mutual TLS go-plugin
// negotiated in its handshake (AutoMTLS). It does not use go-plugin's own
// gRPC client, which would open two more long-lived streams (stdio
// forwarding and the broker) that YEP has no use for, and which would
// keep a plugin's graceful stop waiting until the host hangs up.
func dial(addr net.Addr, tlsConfig *tls.Config) (*grpc.ClientConn, error) {
	creds := insecure.NewCredentials()
	if tlsConfig != nil {
		creds = credentials.NewTLS(tlsConfig)
	}
	return grpc.NewClient("passthrough:///yep",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, addr.Network(), addr.String())
		}),
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(wire.MaxFrame+64<<10)),
	)
}

// failed cleans up after a start that did not get to an open stream and
// returns the error to report: what go-plugin said, how the process ended
// when it ended on its own (its exit status and stderr tail), and what to
// check.
func (t *Transport) failed(spec core.ServerSpec, r *procRunner, client *goplugin.Client, cause error) error {
	msg := strings.TrimSpace(cause.Error())
	stdoutEnded := strings.Contains(msg, "Failed to read any lines") || strings.Contains(msg, "exited before we could connect")
	if inst := r.instance(); inst != nil && stdoutEnded {
		// The plugin closed its stdout: it is exiting on its own. Give it
		// a moment, so the error can say how it ended.
		tm := time.NewTimer(streamEndWait)
		select {
		case <-inst.Done():
			r.markExitedAlone()
		case <-tm.C:
		}
		tm.Stop()
	}
	r.cancel()
	if inst := r.instance(); inst != nil {
		_ = inst.Kill() // waits for the instance's goroutines
		waitClientExited(t.log.Named(spec.Name), client)
	}
	r.removeSocketDir()
	if r.startErr != nil {
		return r.startErr // the checksum or the exec failed: it says so
	}
	hint := "serve it with yolop.dev/transport/goplugin/plugin, which answers this host's handshake"
	switch {
	case strings.Contains(msg, "Failed to read any lines") && r.stdoutBytes() > 0:
		// go-plugin reads lines of at most 64 KiB: a longer one ends its
		// read with no line at all, which is no cookie problem.
		hint = fmt.Sprintf("it printed at least %d bytes of non-handshake output on stdout before its handshake line; a go-plugin server must print only the handshake line on stdout (logs go to stderr); %s", r.stdoutBytes(), hint)
	case strings.Contains(msg, "Failed to read any lines"), strings.Contains(msg, "exited before we could connect"):
		hint = "it printed no handshake line and exited: it did not accept this host's magic cookie (a plugin built for another host, or a program that is no go-plugin server), or failed before its handshake; its stderr says which"
	case strings.Contains(msg, "Unrecognized remote plugin message"):
		hint = "a go-plugin server must print its handshake line first on stdout, and nothing before it (logs go to stderr); " + hint
	case strings.Contains(msg, "incompatible API version"):
		hint = fmt.Sprintf("it speaks another version of yolop's go-plugin protocol (this host speaks %d); rebuild it against this version of yolop.dev/transport/goplugin", wire.Handshake.ProtocolVersion)
	case strings.Contains(msg, "unsupported plugin protocol"):
		hint = "yolop's go-plugin transport speaks gRPC only; " + hint
	case strings.Contains(msg, "timeout while waiting for plugin to start"):
		hint = fmt.Sprintf("it printed no handshake line within %s; %s", t.opts.StartTimeout, hint)
	}
	err := fmt.Errorf("extension %q: %w: %s", spec.Name, ErrHandshake, msg)
	if alone, exit := r.exitedOnItsOwn(); alone {
		if exit == nil {
			exit = fmt.Errorf("extension %q exited (exit status 0)", spec.Name)
		}
		return fmt.Errorf("%w; %s; %w", err, hint, exit)
	}
	if errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded) {
		return fmt.Errorf("%w; %s", err, hint)
	}
	if tail := r.instance(); tail != nil && len(tail.StderrTail()) > 0 {
		return fmt.Errorf("%w; %s; last stderr lines:\n  %s", err, hint, strings.Join(tail.StderrTail(), "\n  "))
	}
	return fmt.Errorf("%w; %s", err, hint)
}

// hostPlugin names the YEP plugin in the host's plugin set, which
// go-plugin's version negotiation needs; the host dials the plugin itself
// (see dial), so go-plugin never dispenses it.
type hostPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
}

func (hostPlugin) GRPCServer(*goplugin.GRPCBroker, *grpc.Server) error {
	return errors.New("the YEP plugin is served by the plugin, not the host")
}

func (hostPlugin) GRPCClient(_ context.Context, _ *goplugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return conn, nil
}
