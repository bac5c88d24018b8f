package wasm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"yolop.dev/core"
	"yolop.dev/transport/wasm"
)

// tinyModule returns a minimal WASI command, encoded here by hand: its
// _start writes "ok\n" to stdout with fd_write and returns. It compiles
// in a moment, where a Go guest takes seconds (many more under -race), so
// the tests that compile over and over use it.
func tinyModule(t *testing.T) string {
	t.Helper()
	vec := func(items ...[]byte) []byte {
		out := uleb(uint32(len(items)))
		for _, it := range items {
			out = append(out, it...)
		}
		return out
	}
	str := func(s string) []byte { return append(uleb(uint32(len(s))), s...) }
	section := func(id byte, body []byte) []byte {
		return append(append([]byte{id}, uleb(uint32(len(body)))...), body...)
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

	code := []byte{
		0x00,       // no locals
		0x41, 0x01, // i32.const 1 (stdout)
		0x41, 0x10, // i32.const 16 (the iovec)
		0x41, 0x01, // i32.const 1 (one iovec)
		0x41, 0x20, // i32.const 32 (where nwritten goes)
		0x10, 0x00, // call fd_write
		0x1a, // drop the errno
		0x0b, // end
	}
	data := append([]byte("ok\n"), make([]byte, 13)...)
	data = append(data, 0, 0, 0, 0, 3, 0, 0, 0) // iovec{buf: 0, len: 3}
	bin := cat([]byte("\x00asm\x01\x00\x00\x00"),
		section(1, vec( // types: fd_write's, and _start's
			[]byte{0x60, 4, 0x7f, 0x7f, 0x7f, 0x7f, 1, 0x7f},
			[]byte{0x60, 0, 0})),
		section(2, vec(cat(str("wasi_snapshot_preview1"), str("fd_write"), []byte{0x00, 0x00}))),
		section(3, vec([]byte{0x01})),
		section(5, vec([]byte{0x00, 0x01})), // one memory of one page
		section(7, vec(cat(str("_start"), []byte{0x00, 0x01}), cat(str("memory"), []byte{0x02, 0x00}))),
		section(10, vec(append(uleb(uint32(len(code))), code...))),
		section(11, vec(cat([]byte{0x00, 0x41, 0x00, 0x0b}, uleb(uint32(len(data))), data))),
	)
	p := filepath.Join(t.TempDir(), "tiny.wasm")
	if err := os.WriteFile(p, bin, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func uleb(v uint32) []byte {
	var out []byte
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(out, b)
		}
		out = append(out, b|0x80)
	}
}

// startTiny starts the tiny module on tr and checks what it writes and
// that it ends cleanly.
func startTiny(t *testing.T, tr *wasm.Transport, module string) {
	t.Helper()
	inst := start(t, tr, "tiny", module, nil)
	out, err := io.ReadAll(inst.Stdout())
	if err != nil || string(out) != "ok\n" {
		t.Fatalf("tiny module wrote %q, %v", out, err)
	}
	waitDone(t, inst, "the tiny module")
	if err := inst.Err(); err != nil {
		t.Fatalf("tiny module: %v", err)
	}
}

// startLoop starts the ndjsonloop guest on tr and checks one round trip.
func startLoop(t *testing.T, tr *wasm.Transport) {
	t.Helper()
	inst := start(t, tr, "loop", loopWasm, nil)
	if err := loopRoundTrip(inst, "cached?"); err != nil {
		t.Fatal(err)
	}
	inst.Kill()
}

// stats compares a Transport's Stats.
func wantStats(t *testing.T, what string, tr *wasm.Transport, want wasm.Stats) {
	t.Helper()
	if got := tr.Stats(); got != want {
		t.Errorf("%s: Stats = %+v, want %+v", what, got, want)
	}
}

// TestMemoryCache checks that concurrent Starts of one module on one
// Transport compile it once.
func TestMemoryCache(t *testing.T) {
	module := tinyModule(t)
	tr := newTransport(t, wasm.Options{CacheDir: "-"})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			inst, err := tr.Start(context.Background(), core.ServerSpec{Name: "tiny", Command: module})
			if err != nil {
				t.Error(err)
				return
			}
			defer inst.Kill()
			if out, err := io.ReadAll(inst.Stdout()); err != nil || string(out) != "ok\n" {
				t.Errorf("tiny module wrote %q, %v", out, err)
			}
		})
	}
	within(t, "four Starts", wg.Wait)
	wantStats(t, "four Starts", tr, wasm.Stats{Compiled: 1, MemoryHits: 3})
}

// TestDiskCache checks that a module compiled by one Transport is loaded,
// not compiled, by the next one with the same CacheDir.
func TestDiskCache(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	first := newTransport(t, wasm.Options{CacheDir: dir})
	startLoop(t, first)
	startLoop(t, first)
	wantStats(t, "first transport", first, wasm.Stats{Compiled: 1, MemoryHits: 1})
	second := newTransport(t, wasm.Options{CacheDir: dir})
	startLoop(t, second)
	wantStats(t, "second transport", second, wasm.Stats{DiskHits: 1})
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("cache directory mode = %v, %v; want 0700", fi.Mode().Perm(), err)
	}
}

// cacheFiles returns the files wazero wrote under dir, and each entry's
// sums file.
func cacheFiles(t *testing.T, dir string) (code, sums []string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch {
		case strings.Contains(p, string(filepath.Separator)+"wazero"+string(filepath.Separator)):
			code = append(code, p)
		case d.Name() == "sums":
			sums = append(sums, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(code) != 1 || len(sums) != 1 {
		t.Fatalf("cache holds code %v and sums %v, want one of each", code, sums)
	}
	return code, sums
}

// TestDiskCacheTampered corrupts a persisted entry on disk in every way a
// file can be damaged and checks that the next Transport detects it,
// discards it, compiles afresh and stores a good entry, and that the one
// after that loads the new entry.
func TestDiskCacheTampered(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, dir, code, sums string)
	}{
		{"flipped byte in the code", func(t *testing.T, _, code, _ string) { flip(t, code, 0.6) }},
		// The header holds the function offsets, which wazero's own CRC
		// does not cover: a change there would run the wrong native code.
		{"flipped byte in the header", func(t *testing.T, _, code, _ string) { flip(t, code, 0) }},
		{"truncated", func(t *testing.T, _, code, _ string) { truncate(t, code, 0.5) }},
		{"emptied", func(t *testing.T, _, code, _ string) { truncate(t, code, 0) }},
		{"extended", func(t *testing.T, _, code, _ string) { appendTo(t, code, "trailing garbage") }},
		{"sums rewritten", func(t *testing.T, _, _, sums string) {
			b, _ := os.ReadFile(sums)
			os.WriteFile(sums, bytes.Replace(b, b[:8], []byte("00000000"), 1), 0o600)
		}},
		{"sums garbled", func(t *testing.T, _, _, sums string) { os.WriteFile(sums, []byte("not sums"), 0o600) }},
		{"sums deleted", func(t *testing.T, _, _, sums string) { os.Remove(sums) }},
		{"file added", func(t *testing.T, _, code, _ string) {
			os.WriteFile(filepath.Join(filepath.Dir(code), "planted"), []byte("x"), 0o600)
		}},
		{"key replaced", func(t *testing.T, dir, _, _ string) {
			os.WriteFile(filepath.Join(dir, "key"), bytes.Repeat([]byte{7}, 32), 0o600)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cache")
			module := tinyModule(t)
			startTiny(t, newTransport(t, wasm.Options{CacheDir: dir}), module)
			code, sums := cacheFiles(t, dir)
			tc.tamper(t, dir, code[0], sums[0])

			log, buf := captureLogger()
			tr := newTransport(t, wasm.Options{CacheDir: dir, Logger: log})
			startTiny(t, tr, module)
			wantStats(t, "after the tampering", tr, wasm.Stats{Compiled: 1, Discarded: 1})
			if !strings.Contains(buf.String(), "failed its check; discarding and rebuilding it") {
				t.Errorf("the discarded entry was not logged:\n%s", buf.String())
			}
			again := newTransport(t, wasm.Options{CacheDir: dir})
			startTiny(t, again, module)
			wantStats(t, "the rebuilt entry", again, wasm.Stats{DiskHits: 1})
		})
	}
}

// TestDiskCacheUnloadable plants an entry that passes the check but that
// wazero cannot deserialise (a holder of the key wrote garbage): the
// compile falls back to a rebuild rather than failing.
func TestDiskCacheUnloadable(t *testing.T) {
	module := tinyModule(t)
	dir := filepath.Join(t.TempDir(), "cache")
	key := bytes.Repeat([]byte{42}, 32)
	startTiny(t, newTransport(t, wasm.Options{CacheDir: dir, CacheKey: key}), module)
	code, _ := cacheFiles(t, dir)
	truncate(t, code[0], 0.5)
	if err := wasm.ResealForTest(dir, key); err != nil {
		t.Fatal(err)
	}
	tr := newTransport(t, wasm.Options{CacheDir: dir, CacheKey: key})
	startTiny(t, tr, module)
	wantStats(t, "an entry wazero cannot load", tr, wasm.Stats{Compiled: 1, Discarded: 1})
	again := newTransport(t, wasm.Options{CacheDir: dir, CacheKey: key})
	startTiny(t, again, module)
	wantStats(t, "the rebuilt entry", again, wasm.Stats{DiskHits: 1})
}

// TestDiskCacheKey checks that entries sealed under one key are refused
// under another: a cache directory whose key file was replaced with it
// (restored from elsewhere) cannot feed code to a host whose key lives
// outside it.
func TestDiskCacheKey(t *testing.T) {
	module := tinyModule(t)
	dir := filepath.Join(t.TempDir(), "cache")
	startTiny(t, newTransport(t, wasm.Options{CacheDir: dir}), module)
	own := newTransport(t, wasm.Options{CacheDir: dir, CacheKey: []byte("a key kept in the config directory")})
	startTiny(t, own, module)
	wantStats(t, "an entry sealed under the directory's key", own, wasm.Stats{Compiled: 1, Discarded: 1})
	again := newTransport(t, wasm.Options{CacheDir: dir, CacheKey: []byte("a key kept in the config directory")})
	startTiny(t, again, module)
	wantStats(t, "the resealed entry", again, wasm.Stats{DiskHits: 1})
}

// TestDiskCacheNotPrivate checks that a cache directory other users may
// write to is not used, and that this is no error.
func TestDiskCacheNotPrivate(t *testing.T) {
	module := tinyModule(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	log, buf := captureLogger()
	tr := newTransport(t, wasm.Options{CacheDir: dir, Logger: log})
	startTiny(t, tr, module)
	wantStats(t, "a shared directory", tr, wasm.Stats{Compiled: 1})
	if !strings.Contains(buf.String(), "writable by other users") {
		t.Errorf("the refusal was not logged:\n%s", buf.String())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the transport wrote %d entries into a directory it refused", len(entries))
	}
}

// TestDiskCacheTwoProcesses starts two processes that compile the same
// module into the same empty cache at once: they serialise on the entry's
// lock, so one compiles and the other loads what it wrote, and neither
// sees a damaged entry.
func TestDiskCacheTwoProcesses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for range 2 {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), helperEnv+"=start", helperCacheEnv+"="+dir, helperModuleEnv+"="+loopWasm)
		out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = out, errOut
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	for _, cmd := range cmds {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	var total wasm.Stats
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", i, err, cmd.Stderr)
		}
		var s wasm.Stats
		if err := json.Unmarshal(outs[i].Bytes(), &s); err != nil {
			t.Fatalf("process %d printed %q: %v", i, outs[i], err)
		}
		total.Compiled += s.Compiled
		total.DiskHits += s.DiskHits
		total.Discarded += s.Discarded
	}
	if want := (wasm.Stats{Compiled: 1, DiskHits: 1}); total != want {
		t.Errorf("both processes together: %+v, want %+v", total, want)
	}
	after := newTransport(t, wasm.Options{CacheDir: dir})
	startLoop(t, after)
	wantStats(t, "a third start", after, wasm.Stats{DiskHits: 1})
}

func flip(t *testing.T, p string, at float64) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	i := int(float64(len(b)-1) * at)
	if at == 0 {
		i = 12 // past wazero's magic and version, in the offsets
	}
	b[i] ^= 0xff
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func truncate(t *testing.T, p string, keep float64) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, int64(float64(fi.Size())*keep)); err != nil {
		t.Fatal(err)
	}
}

func appendTo(t *testing.T, p, s string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}
