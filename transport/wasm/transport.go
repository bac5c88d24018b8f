package wasm

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"yolop.dev/core"
)

// A Transport is a [core.Transport] that runs each capability server as a
// WebAssembly (wasip1) module inside the host process. Create one with
// [New]; the zero Transport is usable and behaves like New(Options{}).
// A Transport may be used from many goroutines. It keeps the modules it
// has compiled until [Transport.Close].
type Transport struct {
	opts Options

	mu        sync.Mutex
	modules   map[[32]byte]*module
	instances map[*proc]struct{}
	closed    bool
	starting  sync.WaitGroup // Starts past the closed check
	compiling sync.WaitGroup

	diskOnce sync.Once
	disk     *diskCache // nil without a usable CacheDir

	stats struct{ compiled, diskHits, memoryHits, discarded atomic.Int64 }

	// unguarded compiles without the CPU guard, for the benchmark that
	// measures what the guard costs; a guest compiled so cannot be
	// stopped while it runs.
	unguarded bool
}

var _ core.Transport = (*Transport)(nil)

// New returns a Transport with the given options.
func New(opts Options) *Transport {
	return &Transport{opts: opts.withDefaults()}
}

// Stats counts how a Transport obtained the compiled modules of its
// Starts.
type Stats struct {
	// Compiled counts modules compiled from their bytes.
	Compiled int64
	// DiskHits counts modules loaded from the persisted compile cache.
	DiskHits int64
	// MemoryHits counts Starts that reused a module this Transport had
	// already compiled or loaded.
	MemoryHits int64
	// Discarded counts persisted cache entries that failed their check
	// (or could not be loaded) and were removed and rebuilt.
	Discarded int64
}

// Stats returns the counts so far.
func (t *Transport) Stats() Stats {
	return Stats{
		Compiled:   t.stats.compiled.Load(),
		DiskHits:   t.stats.diskHits.Load(),
		MemoryHits: t.stats.memoryHits.Load(),
		Discarded:  t.stats.discarded.Load(),
	}
}

// A module is one compiled module, with the runtime it was compiled by.
type module struct {
	ready chan struct{} // closed when the fields below are set
	err   error

	digest    [32]byte
	path      string // where it was first read from, for messages
	runtime   wazero.Runtime
	cache     wazero.CompilationCache // nil without a persisted cache
	compiled  wazero.CompiledModule
	minMemory uint64 // bytes the module's memory starts with
}

func (m *module) close() {
	ctx := context.Background()
	if m.runtime != nil {
		_ = m.runtime.Close(ctx)
	}
	if m.cache != nil {
		_ = m.cache.Close(ctx)
	}
}

// Start implements [core.Transport]. It reads the module spec.Command
// names (see the package doc), compiles it or takes it from the compile
// caches, and instantiates it with the sandbox's configuration and fresh
// pipes for its standard streams. It returns once the instance is running
// (its _start function has been entered). ctx bounds the wait for a
// compile and is checked before instantiation; cancelling it later has no
// effect on the instance.
//
// The returned instance is an *[Instance]. The caller owns it and must
// call Stop or Kill on it.
func (t *Transport) Start(ctx context.Context, spec core.ServerSpec) (core.Instance, error) {
	if spec.Name == "" {
		return nil, fmt.Errorf("wasm: %w (module %q); set core.ServerSpec.Name", ErrNoName, spec.Command)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("extension %q: start cancelled: %w", spec.Name, err)
	}
	opts := t.opts.withDefaults()
	envNames, secrets, err := buildEnv(spec.Name, spec.Env)
	if err != nil {
		return nil, err
	}
	// The spec's sandbox (from the approved manifest) adds to the
	// transport's own: its mounts, and a memory cap that replaces the
	// default.
	fsGrant := append(slices.Clone(opts.FS), specMounts(spec)...)
	if spec.MaxMemoryMB > 0 {
		opts.MaxMemoryMB = spec.MaxMemoryMB
	}
	mounts, err := checkMounts(fsGrant)
	if err != nil {
		return nil, fmt.Errorf("extension %q: %w; fix the filesystem grant (capabilityServer.fs) in its manifest", spec.Name, err)
	}
	path, err := resolveModule(spec)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, fmt.Errorf("extension %q: %w", spec.Name, ErrClosed)
	}
	t.starting.Add(1)
	t.mu.Unlock()
	defer t.starting.Done()

	bin, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("extension %q: read module: %w", spec.Name, err)
	}
	if err := checkMagic(bin); err != nil {
		return nil, fmt.Errorf("extension %q: %s is %w: %v; point \"module\" in the manifest at a .wasm file built for wasip1 (GOOS=wasip1 GOARCH=wasm, or --target wasm32-wasip1)", spec.Name, path, ErrNotWasm, err)
	}
	m, err := t.module(ctx, spec.Name, path, bin)
	if err != nil {
		return nil, err
	}
	limit := uint64(opts.MaxMemoryMB) << 20
	if m.minMemory > limit {
		return nil, fmt.Errorf("extension %q: %w: %s declares %s of initial memory, over the cap of %s; raise MaxMemoryMB", spec.Name, ErrMemoryCap, path, mib(m.minMemory), mib(limit))
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("extension %q: start cancelled: %w", spec.Name, err)
	}

	p, err := newProc(spec, opts, secrets, limit)
	if err != nil {
		return nil, err
	}
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions().
		WithArgs(append([]string{filepath.Base(path)}, spec.Args...)...).
		WithStdin(p.childIn).
		WithStdout(p.childOut).
		WithStderr(p.childErr).
		WithSysNanotime().
		WithSysWalltime().
		WithNanosleep(p.sleep).
		WithRandSource(rand.Reader)
	for _, n := range envNames {
		cfg = cfg.WithEnv(n, spec.Env[n])
	}
	if len(mounts) > 0 {
		fsc := wazero.NewFSConfig()
		for _, mt := range mounts {
			f, root, err := mountFS(mt)
			if err != nil {
				p.release()
				return nil, fmt.Errorf("extension %q: %w", spec.Name, err)
			}
			p.roots = append(p.roots, root)
			fsc = fsc.(sysfsConfig).WithSysFSMount(f, mt.GuestPath)
		}
		cfg = cfg.WithFSConfig(fsc)
	}

	if err := p.instantiate(m, cfg); err != nil {
		p.release()
		return nil, fmt.Errorf("extension %q: %s: %w", spec.Name, path, err)
	}
	// Registered before the guest runs, so that its end (which forgets
	// it) comes after; Close waits for Starts in progress before it
	// kills what is registered.
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		p.mod.Close(context.Background())
		p.release()
		return nil, fmt.Errorf("extension %q: %w", spec.Name, ErrClosed)
	}
	t.instances[p] = struct{}{}
	t.mu.Unlock()
	p.forget = func() {
		t.mu.Lock()
		delete(t.instances, p)
		t.mu.Unlock()
	}
	p.launch()
	p.log.Debug("guest started", "module", path, "sha256", fmt.Sprintf("%x", m.digest), "memory_cap", mib(limit), "mounts", len(mounts))
	return p.handle(), nil
}

// module returns the compiled module for bin, compiling it, loading it from
// the persisted cache or reusing it, once per Transport.
func (t *Transport) module(ctx context.Context, ext, path string, bin []byte) (*module, error) {
	digest := sha256.Sum256(bin)
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, fmt.Errorf("extension %q: %w", ext, ErrClosed)
	}
	if t.modules == nil {
		t.modules = map[[32]byte]*module{}
		t.instances = map[*proc]struct{}{}
	}
	m, found := t.modules[digest]
	if !found {
		m = &module{ready: make(chan struct{}), digest: digest, path: path}
		t.modules[digest] = m
		t.compiling.Add(1)
		go func() {
			defer t.compiling.Done()
			t.compile(ext, m, bin)
		}()
	}
	t.mu.Unlock()
	select {
	case <-m.ready:
	case <-ctx.Done():
		return nil, fmt.Errorf("extension %q: start cancelled while compiling %s: %w", ext, path, ctx.Err())
	}
	if m.err != nil {
		return nil, m.err
	}
	if found {
		t.stats.memoryHits.Add(1)
	}
	return m, nil
}

// compile fills in m and closes m.ready. A failed compile is forgotten, so
// that a later Start tries again.
func (t *Transport) compile(ext string, m *module, bin []byte) {
	defer close(m.ready)
	t0 := time.Now()
	log := t.opts.withDefaults().Logger
	build := func(cc wazero.CompilationCache) error {
		cfg := wazero.NewRuntimeConfig().WithCloseOnContextDone(!t.unguarded)
		if cc != nil {
			cfg = cfg.WithCompilationCache(cc)
		}
		ctx := context.Background()
		r := wazero.NewRuntimeWithConfig(ctx, cfg)
		fail := func(err error) error {
			r.Close(ctx)
			if cc != nil {
				cc.Close(ctx)
			}
			return err
		}
		if _, err := wasi_snapshot_preview1.Instantiate(ctx, r); err != nil {
			return fail(err)
		}
		cm, err := r.CompileModule(ctx, bin)
		if err != nil {
			return fail(err)
		}
		m.runtime, m.cache, m.compiled = r, cc, cm
		return nil
	}

	var outcome cacheOutcome = cacheBypassed
	var err error
	if d := t.diskCache(); d != nil {
		var e *entry
		if e, err = d.entry(m.digest, !t.unguarded); err == nil {
			outcome, err = e.compile(context.Background(), build)
		} else {
			log.Warn("compile cache entry not usable; compiling without it", "error", err)
			err = build(nil)
		}
	} else {
		err = build(nil)
	}
	if err == nil {
		err = checkCommand(m.compiled)
		if err != nil {
			m.close()
		}
	}
	if err != nil {
		if !errors.Is(err, ErrNotCommand) {
			err = fmt.Errorf("%w: %v", ErrNotWasm, err)
		}
		m.err = fmt.Errorf("extension %q: %s is %w", ext, m.path, err)
		t.mu.Lock()
		delete(t.modules, m.digest)
		t.mu.Unlock()
		return
	}
	m.minMemory = minMemory(m.compiled)
	if bytes.Contains(bin, []byte("os/signal.signal_recv")) {
		log.Warn("the module is a Go program that calls os/signal.Notify: on wasip1 that starts a goroutine that never sleeps, and the guest stops reading its stdin after the first message; build it without os/signal for wasip1", "module", m.path)
	}
	switch outcome {
	case cacheHit:
		t.stats.diskHits.Add(1)
	case cacheRebuilt:
		t.stats.discarded.Add(1)
		t.stats.compiled.Add(1)
	default:
		t.stats.compiled.Add(1)
	}
	log.Debug("module ready", "module", m.path, "cache", [...]string{"hit", "miss", "rebuilt", "none"}[outcome], "took", time.Since(t0))
}

// diskCache opens CacheDir once; nil means there is no usable one.
func (t *Transport) diskCache() *diskCache {
	t.diskOnce.Do(func() {
		opts := t.opts.withDefaults()
		if opts.CacheDir == "" {
			return
		}
		d, err := openDiskCache(opts.CacheDir, opts.CacheKey, opts.Logger)
		if err != nil {
			opts.Logger.Warn("compile cache directory not used; modules are compiled in memory only", "dir", opts.CacheDir, "error", err)
			return
		}
		t.disk = d
	})
	return t.disk
}

// Close kills the instances still running, then releases every compiled
// module. Start fails with [ErrClosed] afterwards. It is idempotent.
func (t *Transport) Close() error {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.starting.Wait()
	t.mu.Lock()
	live := make([]*proc, 0, len(t.instances))
	for p := range t.instances {
		live = append(live, p)
	}
	t.mu.Unlock()
	for _, p := range live {
		_ = p.kill()
	}
	t.compiling.Wait()
	t.mu.Lock()
	mods := t.modules
	t.modules = nil
	t.mu.Unlock()
	for _, m := range mods {
		m.close()
	}
	return nil
}

// resolveModule returns the absolute path of the module spec.Command
// names: an absolute path, or a path relative to the package directory
// (Dir when there is none) that may not leave it.
func resolveModule(spec core.ServerSpec) (string, error) {
	cmd := spec.Command
	if spec.Module != "" {
		cmd = spec.Module // the manifest's capabilityServer.module, made absolute
	}
	fix := "fix \"module\" in the extension's plugin.json"
	if cmd == "" {
		return "", fmt.Errorf("extension %q: %w; %s", spec.Name, ErrNoModule, fix)
	}
	var full string
	if filepath.IsAbs(cmd) {
		full = filepath.Clean(cmd)
	} else {
		base := spec.PackageDir
		if base == "" {
			base = spec.Dir
		}
		if base == "" {
			return "", fmt.Errorf("extension %q: relative module path %q needs a package directory to resolve against; give an absolute path or set the package directory", spec.Name, cmd)
		}
		base, err := filepath.Abs(base)
		if err != nil {
			return "", fmt.Errorf("extension %q: resolve package directory: %w", spec.Name, err)
		}
		full = filepath.Join(base, cmd)
		if spec.PackageDir != "" && !within(base, full) {
			return "", fmt.Errorf("extension %q: %w: %q resolves to %s, outside %s; keep the module inside the package and %s", spec.Name, ErrModuleOutsidePackage, cmd, full, base, fix)
		}
	}
	fi, err := os.Stat(full)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("extension %q: %w: %s does not exist; build it (GOOS=wasip1 GOARCH=wasm go build -o %s) or %s", spec.Name, ErrModuleNotFound, full, filepath.Base(full), fix)
	case err != nil:
		return "", fmt.Errorf("extension %q: stat module: %w", spec.Name, err)
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("extension %q: %s is %w: it is not a regular file; %s", spec.Name, full, ErrNotWasm, fix)
	}
	return full, nil
}

// within reports whether p is base or lies below it (both clean, absolute).
func within(base, p string) bool {
	rel, err := filepath.Rel(base, p)
	if err != nil {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// checkMagic checks the WebAssembly binary header, for a clear error
// before anything is compiled.
func checkMagic(bin []byte) error {
	switch {
	case len(bin) == 0:
		return errors.New("the file is empty")
	case len(bin) < 8 && bytes.HasPrefix([]byte("\x00asm\x01\x00\x00\x00"), bin):
		return fmt.Errorf("the file is truncated (%d bytes)", len(bin))
	case !bytes.HasPrefix(bin, []byte("\x00asm")):
		return errors.New("it does not start with the WebAssembly magic number")
	case !bytes.Equal(bin[4:8], []byte{1, 0, 0, 0}):
		return fmt.Errorf("binary format version %x, want 1 (a component-model or future binary is not a wasip1 module)", bin[4:8])
	}
	return nil
}

// checkCommand checks that a compiled module is a WASI command the sandbox
// can link.
func checkCommand(cm wazero.CompiledModule) error {
	if _, ok := cm.ExportedFunctions()["_start"]; !ok {
		return fmt.Errorf("%w: it exports no _start function (a reactor or library module cannot serve; build a command, package main)", ErrNotCommand)
	}
	for _, f := range cm.ImportedFunctions() {
		if mod, name, _ := f.Import(); mod != wasi_snapshot_preview1.ModuleName {
			return fmt.Errorf("%w: it imports %s.%s, and the sandbox provides only %s", ErrNotCommand, mod, name, wasi_snapshot_preview1.ModuleName)
		}
	}
	if len(cm.ImportedMemories()) > 0 {
		return fmt.Errorf("%w: it imports its memory, and the sandbox provides none", ErrNotCommand)
	}
	return nil
}

// minMemory is the initial size of the module's memory in bytes.
func minMemory(cm wazero.CompiledModule) uint64 {
	var n uint64
	for _, d := range cm.ExportedMemories() {
		n = max(n, uint64(d.Min())*65536)
	}
	return n
}

// specMounts turns the spec's mounts into the transport's: each at the same
// path in the guest as on the host, so a workspace root the server gets in
// initialize is the one it can open. A mount keeps its Within (the
// workspace root); one without it that lies in the package directory is
// anchored there, so no link in the package carries it elsewhere.
func specMounts(spec core.ServerSpec) []Mount {
	out := make([]Mount, 0, len(spec.Mounts))
	for _, m := range spec.Mounts {
		anchor := m.Within
		if anchor == "" && spec.PackageDir != "" && filepath.IsAbs(m.Path) && filepath.IsAbs(spec.PackageDir) &&
			within(filepath.Clean(spec.PackageDir), filepath.Clean(m.Path)) {
			anchor = spec.PackageDir
		}
		out = append(out, Mount{HostPath: m.Path, ReadOnly: m.ReadOnly, Within: anchor})
	}
	return out
}
