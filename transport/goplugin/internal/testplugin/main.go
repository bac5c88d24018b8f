//go:build unix

// Command testplugin is the plugin the go-plugin transport's tests start:
// built with go build in TestMain, never committed. Its first argument
// selects what it plays:
//
//	conf <behaviour>  a behaviour of the shared transport suite over the
//	                  YEP stream; a nonzero status exits at once, mid-stream
//	sdk               the echo extension, plus a "crash" tool that dies in
//	                  the middle of its call and a "pid" tool
//	garbage           prints a line before go-plugin's handshake line
//	hang              never prints a handshake line
//	flood             prints 1 MiB on stdout, with no newline, instead of
//	                  its handshake line, then sleeps
//	cookie            answers another host's magic cookie
//	version           speaks protocol version 2
//	tree              starts a grandchild in a session of its own that
//	                  ignores SIGTERM, writes "grandchild <pid>" (the pid as
//	                  the host sees it) on the stream, then echoes
//	sleeper           (the grandchild) prints its host pid and sleeps
package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"yolop.dev/core/examples/echo/echoext"
	"yolop.dev/core/sdk"
	"yolop.dev/core/transporttest/conformance"
	"yolop.dev/core/yep"
	"yolop.dev/transport/goplugin/internal/wire"
	"yolop.dev/transport/goplugin/plugin"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "testplugin: which mode?")
		os.Exit(2)
	}
	ctx := context.Background()
	switch mode := os.Args[1]; mode {
	case "conf":
		b := conformance.Behaviours()[os.Args[2]]
		err := plugin.ServeStream(ctx, func(ctx context.Context, r io.Reader, w io.Writer) error {
			if code := b(ctx, r, w, os.Stderr); code != 0 {
				os.Exit(code) // a crash: no goodbye on the stream
			}
			return nil
		}, plugin.Options{})
		exit(err)
	case "sdk":
		s := echoext.New(hclog.New(&hclog.LoggerOptions{Output: os.Stderr, Level: hclog.Warn}))
		s.Tool("crash", func(context.Context, *sdk.ToolCall) (yep.ToolResult, error) {
			fmt.Fprintln(os.Stderr, "testplugin: crashing in the middle of a call")
			os.Exit(3)
			return yep.ToolResult{}, nil
		})
		s.Tool("pid", func(context.Context, *sdk.ToolCall) (yep.ToolResult, error) {
			pid, err := hostPID()
			return yep.ToolResult{Output: strconv.Itoa(pid)}, err
		})
		exit(plugin.Serve(ctx, s, plugin.Options{}))
	case "garbage":
		fmt.Println("hello from a plugin that talks before its handshake")
		exit(plugin.ServeStream(ctx, echoStream, plugin.Options{}))
	case "hang":
		fmt.Fprintln(os.Stderr, "testplugin: hanging before the handshake")
		sleepForever()
	case "flood":
		os.Stdout.Write(bytes.Repeat([]byte("x"), 1<<20))
		sleepForever()
	case "cookie", "version":
		hs := wire.Handshake
		if mode == "cookie" {
			hs.MagicCookieValue = "some-other-host"
		} else {
			hs.ProtocolVersion = 2
		}
		// The handshake fails before any stream: no service is needed.
		goplugin.Serve(&goplugin.ServeConfig{
			HandshakeConfig: hs,
			Plugins:         goplugin.PluginSet{wire.PluginName: nothing{}},
			GRPCServer:      goplugin.DefaultGRPCServer,
		})
		os.Exit(0)
	case "tree":
		exit(plugin.ServeStream(ctx, tree, plugin.Options{}))
	case "sleeper":
		signal.Ignore(syscall.SIGTERM)
		pid, err := hostPID()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(pid)
		sleepForever()
	}
	fmt.Fprintf(os.Stderr, "testplugin: unknown mode %q\n", os.Args[1])
	os.Exit(2)
}

func exit(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "testplugin:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// tree starts the grandchild, reports its pid, then echoes.
func tree(ctx context.Context, r io.Reader, w io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	gc := exec.Command(self, "sleeper")
	gc.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	gc.Stderr = os.Stderr
	out, err := gc.StdoutPipe()
	if err != nil {
		return err
	}
	if err := gc.Start(); err != nil {
		return err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return fmt.Errorf("reading the grandchild's pid: %w", err)
	}
	if _, err := fmt.Fprintf(w, "grandchild %s", line); err != nil {
		return err
	}
	_, err = io.Copy(w, r)
	return err
}

// hostPID is this process's pid as the host sees it: /proc is the host's
// (plugins get no mount namespace), so /proc/self names it even inside a
// PID namespace.
func hostPID() (int, error) {
	s, err := os.Readlink("/proc/self")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(s)
}

func sleepForever() {
	for {
		time.Sleep(time.Hour)
	}
}

// echoStream is the suite's Echo behaviour as a stream server.
func echoStream(ctx context.Context, r io.Reader, w io.Writer) error {
	if code := conformance.Behaviours()[conformance.Echo](ctx, r, w, os.Stderr); code != 0 {
		return fmt.Errorf("echo: exit status %d", code)
	}
	return nil
}

// nothing is a gRPC plugin that serves nothing.
type nothing struct {
	goplugin.NetRPCUnsupportedPlugin
}

func (nothing) GRPCServer(*goplugin.GRPCBroker, *grpc.Server) error { return nil }
func (nothing) GRPCClient(context.Context, *goplugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, nil
}
