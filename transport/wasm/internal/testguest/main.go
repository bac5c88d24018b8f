// Command testguest is the capability server the transport's tests build
// for wasip1 and run as a guest. It is written with the Go author SDK, as
// an extension would be, and serves tools that probe the sandbox or
// misbehave on request:
//
//   - echo {text}: returns text;
//   - env: the guest's environment, one NAME=value per line;
//   - clock: the wall-clock year and whether the monotonic clock advances
//     across a 2ms sleep;
//   - random: 16 random bytes, hex;
//   - read {path}: the file's contents, or the error;
//   - write {path, data}: "ok", or the error;
//   - symlink {target, link}: "ok", or the error;
//   - rename {from, to}: "ok", or the error;
//   - list {path}: the names in a directory, or the error;
//   - dial {addr}: tries a TCP connection and a socket preopened as fd 3;
//   - spin: sends the update "spinning", then loops forever without
//     calling anything (so without yielding to other goroutines);
//   - alloc {mb}: allocates and touches mb MiB, then reports it;
//   - exit {code}: exits the process mid-call;
//   - garbage: writes lines that are not JSON to stdout, then answers;
//   - stderr {n}: writes n numbered lines to stderr;
//   - trap: loads from an address past the end of linear memory.
//
// Filesystem errors are reported as "error: <errno name>: <message>" so
// tests can match the errno.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
)

// spins is written by the spin tool's loop, so the loop has an effect the
// compiler must keep.
var spins uint64

// hoard keeps the alloc tool's memory reachable.
var hoard [][]byte

func main() {
	log := hclog.New(&hclog.LoggerOptions{Name: "testguest", Output: os.Stderr, Level: hclog.Info})
	s := sdk.NewServer(sdk.Info{Name: "testguest", Version: "0.1.0"}, sdk.Options{Logger: log})
	tool := func(name string, f func(ctx context.Context, call *sdk.ToolCall, args map[string]any) (string, error)) {
		s.StreamingTool(name, func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
			args := map[string]any{}
			if err := call.Bind(&args); err != nil {
				return yep.ToolResult{}, err
			}
			out, err := f(ctx, call, args)
			if err != nil {
				return yep.ToolResult{}, err
			}
			return yep.ToolResult{Output: out}, nil
		})
	}
	str := func(args map[string]any, k string) string { v, _ := args[k].(string); return v }
	num := func(args map[string]any, k string) int { v, _ := args[k].(float64); return int(v) }

	tool("echo", func(_ context.Context, _ *sdk.ToolCall, a map[string]any) (string, error) {
		return str(a, "text"), nil
	})
	tool("env", func(context.Context, *sdk.ToolCall, map[string]any) (string, error) {
		env := os.Environ()
		slices.Sort(env)
		return strings.Join(env, "\n"), nil
	})
	tool("clock", func(context.Context, *sdk.ToolCall, map[string]any) (string, error) {
		t0 := time.Now()
		time.Sleep(2 * time.Millisecond)
		return fmt.Sprintf("year=%d advanced=%v", t0.Year(), time.Since(t0) >= 2*time.Millisecond), nil
	})
	tool("random", func(context.Context, *sdk.ToolCall, map[string]any) (string, error) {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return "", err
		}
		return hex.EncodeToString(b), nil
	})
	tool("read", func(_ context.Context, _ *sdk.ToolCall, a map[string]any) (string, error) {
		b, err := os.ReadFile(str(a, "path"))
		if err != nil {
			return describe(err), nil
		}
		return string(b), nil
	})
	tool("write", func(_ context.Context, _ *sdk.ToolCall, a map[string]any) (string, error) {
		if err := os.WriteFile(str(a, "path"), []byte(str(a, "data")), 0o644); err != nil {
			return describe(err), nil
		}
		return "ok", nil
	})
	tool("symlink", func(_ context.Context, _ *sdk.ToolCall, a map[string]any) (string, error) {
		if err := os.Symlink(str(a, "target"), str(a, "link")); err != nil {
			return describe(err), nil
		}
		return "ok", nil
	})
	tool("rename", func(_ context.Context, _ *sdk.ToolCall, a map[string]any) (string, error) {
		if err := os.Rename(str(a, "from"), str(a, "to")); err != nil {
			return describe(err), nil
		}
		return "ok", nil
	})
	tool("list", func(_ context.Context, _ *sdk.ToolCall, a map[string]any) (string, error) {
		entries, err := os.ReadDir(str(a, "path"))
		if err != nil {
			return describe(err), nil
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return strings.Join(names, ","), nil
	})
	tool("dial", func(_ context.Context, _ *sdk.ToolCall, a map[string]any) (string, error) {
		var out []string
		if c, err := net.Dial("tcp", str(a, "addr")); err != nil {
			out = append(out, "dial: "+describe(err))
		} else {
			c.Close()
			out = append(out, "dial: connected")
		}
		if l, err := net.FileListener(os.NewFile(3, "fd3")); err != nil {
			out = append(out, "fd3: "+describe(err))
		} else {
			l.Close()
			out = append(out, "fd3: listening")
		}
		return strings.Join(out, "\n"), nil
	})
	tool("spin", func(_ context.Context, call *sdk.ToolCall, _ map[string]any) (string, error) {
		if err := call.Update("spinning"); err != nil {
			return "", err
		}
		for {
			spins++
		}
	})
	tool("alloc", func(_ context.Context, _ *sdk.ToolCall, a map[string]any) (string, error) {
		for range num(a, "mb") {
			b := make([]byte, 1<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			hoard = append(hoard, b)
		}
		return fmt.Sprintf("allocated %d MiB", len(hoard)), nil
	})
	tool("exit", func(_ context.Context, _ *sdk.ToolCall, a map[string]any) (string, error) {
		fmt.Fprintf(os.Stderr, "exiting with status %d\n", num(a, "code"))
		os.Exit(num(a, "code"))
		return "", nil
	})
	tool("garbage", func(context.Context, *sdk.ToolCall, map[string]any) (string, error) {
		fmt.Fprintln(os.Stdout, "this line is not JSON")
		fmt.Fprintln(os.Stdout, "{not json either")
		return "after garbage", nil
	})
	tool("stderr", func(_ context.Context, _ *sdk.ToolCall, a map[string]any) (string, error) {
		for i := range num(a, "n") {
			fmt.Fprintf(os.Stderr, "line %d token=%s\n", i, os.Getenv("GUEST_TOKEN"))
		}
		return "written", nil
	})
	tool("trap", func(context.Context, *sdk.ToolCall, map[string]any) (string, error) {
		// A pointer to the last bytes of the 4 GiB address space, far past
		// the end of the guest's memory: the load traps.
		addr := uintptr(0xfffffff0)
		p := *(**uint64)(unsafe.Pointer(&addr))
		return fmt.Sprint(*p), nil
	})

	if err := s.Serve(context.Background()); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "testguest:", err)
		os.Exit(1)
	}
}

// describe names the errno behind err, if any.
func describe(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return fmt.Sprintf("error: %s: %v", errnoName(errno), err)
	}
	return "error: " + err.Error()
}

func errnoName(e syscall.Errno) string {
	for _, c := range []struct {
		e    syscall.Errno
		name string
	}{
		{syscall.ENOENT, "ENOENT"}, {syscall.EBADF, "EBADF"}, {syscall.EACCES, "EACCES"},
		{syscall.EPERM, "EPERM"}, {syscall.EROFS, "EROFS"}, {errNotCapable, "ENOTCAPABLE"},
		{syscall.ENOSYS, "ENOSYS"}, {syscall.ENOTSUP, "ENOTSUP"}, {syscall.EISDIR, "EISDIR"},
		{syscall.ENOTDIR, "ENOTDIR"}, {syscall.ELOOP, "ELOOP"}, {syscall.EINVAL, "EINVAL"},
	} {
		if e == c.e {
			return c.name
		}
	}
	return fmt.Sprintf("errno %d", int(e))
}
