package wasm_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"yolop.dev/core"
	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/yep"
	"yolop.dev/transport/wasm"
)

// denied reports whether a guest's answer is a refusal with one of the
// given errnos (the guest prints "error: <ERRNO>: ...").
func denied(out string, errnos ...string) bool {
	for _, e := range errnos {
		if strings.HasPrefix(out, "error: "+e+":") {
			return true
		}
	}
	return false
}

// TestNoFilesystem checks that a guest without mounts reaches no file of
// the host: not /etc/passwd, not a file in the user's home, not a path it
// tries to create.
func TestNoFilesystem(t *testing.T) {
	home := t.TempDir() // stands in for the host's home: a real, readable file
	secret := filepath.Join(home, ".netrc")
	if err := os.WriteFile(secret, []byte("machine example.com password hunter2"), 0o600); err != nil {
		t.Fatal(err)
	}
	tr := newTransport(t, wasm.Options{})
	c := connect(t, start(t, tr, "prober", guestWasm, nil), nil)
	for _, p := range []string{"/etc/passwd", secret, "/", "relative.txt"} {
		if out := c.mustCall("read", map[string]any{"path": p}); !denied(out, "ENOENT", "EBADF", "ENOTCAPABLE") {
			t.Errorf("read %s = %q, want ENOENT or EBADF", p, out)
		}
	}
	if out := c.mustCall("list", map[string]any{"path": "/"}); !denied(out, "ENOENT", "EBADF", "ENOTCAPABLE") {
		t.Errorf("list / = %q, want a refusal", out)
	}
	created := filepath.Join(home, "created-by-guest")
	for _, p := range []string{created, "/tmp/created-by-guest"} {
		if out := c.mustCall("write", map[string]any{"path": p, "data": "x"}); !denied(out, "ENOENT", "EBADF", "ENOTCAPABLE") {
			t.Errorf("write %s = %q, want a refusal", p, out)
		}
	}
	if fileExists(created) || fileExists("/tmp/created-by-guest") {
		t.Error("a guest without mounts created a file on the host")
	}
}

// TestMounts checks read-only and read-write mounts: reads and writes
// inside them, refusals outside them, and symbolic links that try to
// climb out, the guest's own included.
func TestMounts(t *testing.T) {
	root := t.TempDir()
	ro, rw, outside := filepath.Join(root, "ro"), filepath.Join(root, "rw"), filepath.Join(root, "outside")
	for _, d := range []string{ro, rw, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(filepath.Join(ro, "x"), "read me")
	writeFile(filepath.Join(outside, "secret"), "not for guests")
	// Links planted on the host, pointing out of the read-only mount.
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(ro, "abs-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside/secret", filepath.Join(ro, "rel-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside", filepath.Join(ro, "dir-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("x", filepath.Join(ro, "inner-link")); err != nil {
		t.Fatal(err)
	}

	tr := newTransport(t, wasm.Options{FS: []wasm.Mount{
		{HostPath: ro, GuestPath: "/data", ReadOnly: true},
		{HostPath: rw, GuestPath: "/work"},
	}})
	c := connect(t, start(t, tr, "mounted", guestWasm, nil), nil)

	if out := c.mustCall("read", map[string]any{"path": "/data/x"}); out != "read me" {
		t.Errorf("read /data/x = %q", out)
	}
	if out := c.mustCall("read", map[string]any{"path": "/data/inner-link"}); out != "read me" {
		t.Errorf("a link inside the mount: read = %q", out)
	}
	if out := c.mustCall("list", map[string]any{"path": "/data"}); !strings.Contains(out, "x") {
		t.Errorf("list /data = %q", out)
	}
	for _, p := range []string{"/data/new", "/data/x"} {
		if out := c.mustCall("write", map[string]any{"path": p, "data": "overwritten"}); !denied(out, "EROFS") {
			t.Errorf("write %s in the read-only mount = %q, want EROFS", p, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ro, "x")); string(b) != "read me" || fileExists(filepath.Join(ro, "new")) {
		t.Error("a write through the read-only mount reached the host")
	}
	for _, p := range []string{"/tmp/out", "/etc/out", "/out", "/work/../../out"} {
		if out := c.mustCall("write", map[string]any{"path": p, "data": "x"}); !denied(out, "ENOENT", "EBADF", "ENOTCAPABLE", "EPERM") {
			t.Errorf("write %s outside the mounts = %q, want a refusal", p, out)
		}
	}
	if fileExists(filepath.Join(root, "out")) {
		t.Error("a write outside the mounts reached the host")
	}

	if out := c.mustCall("write", map[string]any{"path": "/work/out", "data": "written"}); out != "ok" {
		t.Fatalf("write /work/out = %q", out)
	}
	if b, err := os.ReadFile(filepath.Join(rw, "out")); err != nil || string(b) != "written" {
		t.Errorf("host sees %q, %v", b, err)
	}

	// Links out of a mount: planted on the host, and made by the guest in
	// its writable mount. Following any of them is refused; the target
	// stays unread and unchanged.
	if out := c.mustCall("symlink", map[string]any{"target": "../../../../../../" + strings.TrimPrefix(outside, "/") + "/secret", "link": "/work/escape"}); out != "ok" {
		t.Fatalf("symlink in the writable mount = %q", out)
	}
	if out := c.mustCall("symlink", map[string]any{"target": filepath.Join(outside, "secret"), "link": "/work/abs"}); !denied(out, "EPERM") {
		t.Errorf("an absolute symlink = %q, want EPERM", out)
	}
	for _, p := range []string{"/data/abs-link", "/data/rel-link", "/data/dir-link/secret", "/work/escape"} {
		if out := c.mustCall("read", map[string]any{"path": p}); !denied(out, "EPERM") {
			t.Errorf("read %s = %q, want EPERM", p, out)
		}
	}
	if out := c.mustCall("write", map[string]any{"path": "/work/escape", "data": "overwritten"}); !denied(out, "EPERM") {
		t.Errorf("write through the escaping link = %q, want EPERM", out)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret")); string(b) != "not for guests" {
		t.Errorf("the file outside the mounts now holds %q", b)
	}
}

// TestMountErrors checks that a mount Start cannot make is refused with
// the reason.
func TestMountErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]wasm.Mount{
		"relative host path": {HostPath: "rel", GuestPath: "/x"},
		"missing host path":  {HostPath: filepath.Join(dir, "missing"), GuestPath: "/x"},
		"not a directory":    {HostPath: file, GuestPath: "/x"},
		"relative guest":     {HostPath: dir, GuestPath: "x"},
	} {
		tr := newTransport(t, wasm.Options{FS: []wasm.Mount{m}})
		_, err := tr.Start(context.Background(), core.ServerSpec{Name: "m", Command: guestWasm})
		if !errors.Is(err, wasm.ErrInvalidMount) {
			t.Errorf("%s: Start = %v, want ErrInvalidMount", name, err)
		}
	}
}

// TestNoNetwork checks that a guest can open no connection: wasip1 has no
// call that makes a socket, and no socket is preopened.
func TestNoNetwork(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tr := newTransport(t, wasm.Options{})
	c := connect(t, start(t, tr, "dialer", guestWasm, nil), nil)
	out := c.mustCall("dial", map[string]any{"addr": l.Addr().String()})
	lines := strings.Split(out, "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "dial: error") || !denied(strings.TrimPrefix(lines[1], "fd3: "), "EBADF", "ENOTSOCK", "ENOSYS", "ENOTSUP") {
		t.Errorf("dial = %q, want both the dial and the preopened socket refused", out)
	}
	// Anything the guest had connected would be queued on the listener by
	// now; a short deadline only ends the look when nothing is there.
	l.(*net.TCPListener).SetDeadline(time.Now().Add(50 * time.Millisecond))
	if conn, err := l.Accept(); err == nil {
		conn.Close()
		t.Error("the guest connected to the host's listener")
	}
}

// TestEnvironment checks that a guest sees exactly the spec's variables and
// nothing of the host's.
func TestEnvironment(t *testing.T) {
	t.Setenv("YOLOP_WASM_HOST_CANARY", "leaked")
	tr := newTransport(t, wasm.Options{})
	c := connect(t, start(t, tr, "env", guestWasm, map[string]string{"B": "2", "A": "1=one"}), nil)
	if out := c.mustCall("env", nil); out != "A=1=one\nB=2" {
		t.Errorf("guest environment = %q, want exactly A and B", out)
	}
}

// TestClocksAndRandom checks that a guest reads the real wall clock, that
// its monotonic clock advances across a real sleep, and that its random
// bytes come from a real source (wazero's default is deterministic, so two
// instances would agree).
func TestClocksAndRandom(t *testing.T) {
	tr := newTransport(t, wasm.Options{})
	a := connect(t, start(t, tr, "a", guestWasm, nil), nil)
	b := connect(t, start(t, tr, "b", guestWasm, nil), nil)
	want := "year=" + time.Now().Format("2006") + " advanced=true"
	if out := a.mustCall("clock", nil); out != want {
		t.Errorf("clock = %q, want %q", out, want)
	}
	r1, r2, r3 := a.mustCall("random", nil), a.mustCall("random", nil), b.mustCall("random", nil)
	if len(r1) != 32 || r1 == r2 || r1 == r3 {
		t.Errorf("random bytes %q, %q, %q: want 16 bytes that differ between calls and instances", r1, r2, r3)
	}
}

// TestMemoryCap checks that a guest that allocates past the cap ends with
// an error naming the cap, and that an instance beside it is unaffected.
func TestMemoryCap(t *testing.T) {
	tr := newTransport(t, wasm.Options{MaxMemoryMB: 48, StderrLines: 5000})
	bystander := connect(t, start(t, tr, "bystander", guestWasm, nil), nil)
	inst := start(t, tr, "hog", guestWasm, nil)
	hog := connect(t, inst, nil)
	if out := hog.mustCall("alloc", map[string]any{"mb": 4}); out != "allocated 4 MiB" {
		t.Fatalf("alloc within the cap = %q", out)
	}
	_, err := hog.call("alloc", map[string]any{"mb": 96})
	if !errors.As(err, new(*jsonrpc.ClosedError)) {
		t.Fatalf("alloc past the cap = %v, want the connection closed", err)
	}
	waitDone(t, inst, "the hog")
	var me *wasm.MemoryLimitError
	if !errors.As(inst.Err(), &me) || me.Limit != 48<<20 || me.Requested <= me.Limit || me.Name != "hog" {
		t.Fatalf("Err = %#v, want a MemoryLimitError with the 48 MiB cap", inst.Err())
	}
	if msg := inst.Err().Error(); !strings.Contains(msg, "memory cap of 48 MiB") || !strings.Contains(msg, `extension "hog"`) {
		t.Errorf("message %q does not name the extension and the cap", msg)
	}
	var ee *core.ExitError
	if !errors.As(inst.Err(), &ee) || ee.Code != 2 || !slices.ContainsFunc(ee.Stderr, func(l string) bool { return strings.Contains(l, "out of memory") }) {
		t.Errorf("exit = %#v, want the Go runtime's exit status 2 and its out-of-memory message", ee)
	}
	if out := bystander.mustCall("echo", map[string]any{"text": "unaffected"}); out != "unaffected" {
		t.Errorf("bystander = %q", out)
	}

	small := newTransport(t, wasm.Options{MaxMemoryMB: 1})
	_, err = small.Start(context.Background(), core.ServerSpec{Name: "big", Command: guestWasm})
	if !errors.Is(err, wasm.ErrMemoryCap) || !strings.Contains(err.Error(), "1 MiB") {
		t.Errorf("Start of a module whose initial memory exceeds the cap: %v, want ErrMemoryCap naming 1 MiB", err)
	}
}

// TestTrap checks that a WebAssembly trap ends the guest with a TrapError
// that says what trapped.
func TestTrap(t *testing.T) {
	tr := newTransport(t, wasm.Options{})
	inst := start(t, tr, "trapper", guestWasm, nil)
	c := connect(t, inst, nil)
	if _, err := c.call("trap", nil); !errors.As(err, new(*jsonrpc.ClosedError)) {
		t.Fatalf("trap: %v, want the connection closed", err)
	}
	waitDone(t, inst, "the trap")
	var te *wasm.TrapError
	if !errors.As(inst.Err(), &te) || !strings.Contains(te.Trap, "out of bounds memory access") {
		t.Fatalf("Err = %#v, want a TrapError for the out-of-bounds load", inst.Err())
	}
	var ee *core.ExitError
	if !errors.As(inst.Err(), &ee) || ee.Signal != wasm.SignalTrap || ee.Code != -1 {
		t.Errorf("exit = %#v, want Code -1 and Signal %s", ee, wasm.SignalTrap)
	}
	if msg := inst.Err().Error(); !strings.Contains(msg, `extension "trapper" stopped on a WebAssembly trap: wasm error: out of bounds memory access`) {
		t.Errorf("message %q", msg)
	}
}

// TestSpinningGuest checks the CPU guard: a tool that loops forever is not
// freed by cancelling its call (the cancel is a message the busy guest
// never reads), but Stop and Kill end it, and an instance beside it keeps
// answering throughout. Only events are awaited; nothing is timed.
func TestSpinningGuest(t *testing.T) {
	tr := newTransport(t, wasm.Options{})
	bystander := connect(t, start(t, tr, "bystander", guestWasm, nil), nil)
	for _, how := range []string{"kill", "stop"} {
		t.Run(how, func(t *testing.T) {
			inst := start(t, tr, "spinner", guestWasm, nil)
			c := connect(t, inst, nil)

			ctx, cancel := context.WithCancel(context.Background())
			spinning := make(chan struct{})
			spinErr := make(chan error, 1)
			go func() {
				_, err := c.callCtx(ctx, "spin", nil, func(u string) {
					if u == "spinning" {
						close(spinning)
					}
				})
				spinErr <- err
			}()
			select {
			case <-spinning:
			case <-time.After(hangGuard):
				t.Fatal("the spin tool never started")
			}
			cancel()
			if err := <-spinErr; !errors.Is(err, yep.ErrCancelled) {
				t.Fatalf("cancelled spin: %v, want ErrCancelled", err)
			}
			// The guest is still in its loop: a call it would answer at
			// once stays pending until the instance ends.
			pending := make(chan error, 1)
			go func() {
				_, err := c.call("echo", map[string]any{"text": "never answered"})
				pending <- err
			}()
			if out := bystander.mustCall("echo", map[string]any{"text": "while it spins"}); out != "while it spins" {
				t.Errorf("bystander = %q", out)
			}

			var err error
			within(t, how, func() {
				if how == "kill" {
					err = inst.Kill()
				} else {
					err = inst.Stop(time.Millisecond)
				}
			})
			var ee *core.ExitError
			if !errors.As(err, &ee) || ee.Signal != wasm.SignalKill {
				t.Errorf("%s of a spinning guest: %v, want an ExitError with Signal %s", how, err, wasm.SignalKill)
			}
			if err := <-pending; !errors.As(err, new(*jsonrpc.ClosedError)) {
				t.Errorf("the call sent to the spinning guest: %v, want it failed by the end, never answered", err)
			}
			if out := bystander.mustCall("echo", map[string]any{"text": "after"}); out != "after" {
				t.Errorf("bystander after = %q", out)
			}
		})
	}
}

// linkedMountError checks that err refuses the mount for the link at
// linkPath, naming both.
func linkedMountError(t *testing.T, err error, mount, linkPath string) {
	t.Helper()
	if !errors.Is(err, wasm.ErrMountLink) || !errors.Is(err, wasm.ErrInvalidMount) {
		t.Fatalf("Start = %v, want ErrMountLink", err)
	}
	for _, want := range []string{"mount " + mount, linkPath + " is a symbolic link"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not say %q", err, want)
		}
	}
}

// TestMountRootLinks checks that a mount's own host directory is opened
// without following links below the workspace or package root: a link
// planted as the mount, or as a directory on its way, is refused at start
// with the mount and the link named, and the guest never sees the target.
func TestMountRootLinks(t *testing.T) {
	outside := t.TempDir() // stands in for /etc or /
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("host file"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr := newTransport(t, wasm.Options{})

	t.Run("workspace", func(t *testing.T) {
		ws := t.TempDir()
		link := filepath.Join(ws, "docs")
		if err := os.Symlink(outside, link); err != nil {
			t.Fatal(err)
		}
		mounts := core.ExpandMounts([]core.Mount{{Path: core.WorkspaceVar + string(filepath.Separator) + "docs", ReadOnly: true}}, ws)
		inst, err := tr.Start(context.Background(), core.ServerSpec{Name: "docs", Command: guestWasm, Mounts: mounts})
		if err == nil {
			c := connect(t, inst, nil)
			t.Fatalf("Start mounted %s through its link; the guest reads %q", link, c.mustCall("read", map[string]any{"path": filepath.Join(link, "secret")}))
		}
		linkedMountError(t, err, link, link)
	})

	t.Run("package", func(t *testing.T) {
		pkg := t.TempDir()
		link := filepath.Join(pkg, "data")
		if err := os.Symlink(outside, link); err != nil {
			t.Fatal(err)
		}
		// As packaging/hostgrant resolves ${package}/data.
		spec := core.ServerSpec{Name: "pkg", Command: guestWasm, PackageDir: pkg, Mounts: []core.Mount{{Path: link, ReadOnly: true}}}
		inst, err := tr.Start(context.Background(), spec)
		if err == nil {
			c := connect(t, inst, nil)
			t.Fatalf("Start mounted %s through its link; the guest reads %q", link, c.mustCall("read", map[string]any{"path": filepath.Join(link, "secret")}))
		}
		linkedMountError(t, err, link, link)
	})

	t.Run("plain directory", func(t *testing.T) {
		ws := t.TempDir()
		docs := filepath.Join(ws, "a", "docs")
		if err := os.MkdirAll(docs, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(docs, "x"), []byte("in the workspace"), 0o644); err != nil {
			t.Fatal(err)
		}
		mounts := core.ExpandMounts([]core.Mount{{Path: core.WorkspaceVar + "/a/docs", ReadOnly: true}}, ws)
		inst, err := tr.Start(context.Background(), core.ServerSpec{Name: "plain", Command: guestWasm, Mounts: mounts})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { inst.Kill() })
		if out := connect(t, inst, nil).mustCall("read", map[string]any{"path": filepath.Join(docs, "x")}); out != "in the workspace" {
			t.Errorf("read = %q", out)
		}
	})
}

// TestMountParentSwappedByGuest checks the route a guest alone can take: with
// the workspace read-write and a mount below it, it renames the mount
// point's parent away and puts a link to elsewhere in its place, then
// exits. The next instance's mount must not follow that link.
func TestMountParentSwappedByGuest(t *testing.T) {
	base := t.TempDir()
	ws, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(ws, "a", "b"), filepath.Join(outside, "b")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "b", "secret"), []byte("host file"), 0o644); err != nil {
		t.Fatal(err)
	}
	mounts := core.ExpandMounts([]core.Mount{
		{Path: core.WorkspaceVar},
		{Path: core.WorkspaceVar + "/a/b", ReadOnly: true},
	}, ws)
	spec := core.ServerSpec{Name: "swapper", Command: guestWasm, Mounts: mounts}
	tr := newTransport(t, wasm.Options{})

	inst, err := tr.Start(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Kill() })
	c := connect(t, inst, nil)
	parent := filepath.Join(ws, "a")
	if out := c.mustCall("rename", map[string]any{"from": parent, "to": filepath.Join(ws, "a-old")}); out != "ok" {
		t.Fatalf("rename of the mount point's parent = %q", out)
	}
	if out := c.mustCall("symlink", map[string]any{"target": "../outside", "link": parent}); out != "ok" {
		t.Fatalf("symlink in the writable workspace = %q", out)
	}
	if err := c.shutdown(); err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(parent); err != nil || target != "../outside" {
		t.Fatalf("the guest's link on the host: %q, %v", target, err)
	}

	next, err := tr.Start(context.Background(), spec)
	if err == nil {
		c := connect(t, next, nil)
		t.Fatalf("the next instance mounted %s through the guest's link; it reads %q", filepath.Join(ws, "a", "b"), c.mustCall("read", map[string]any{"path": filepath.Join(ws, "a", "b", "secret")}))
	}
	linkedMountError(t, err, filepath.Join(ws, "a", "b"), parent)
}
