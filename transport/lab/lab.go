// Package lab is the transport lab: it runs the same echo server over every
// transport this build has — the hand-written ndjson floor, stdio,
// go-plugin, WASM and the in-memory transport — alternating them in one run,
// and reports p50/p99 latency, calls/s and spawn→ready, each as a ratio to
// the floor measured beside it. `yolop bench transports` is its front-end;
// docs/transports.md says how to read it and how to add a transport.
//
// The floor is the smallest honest ndjson echo server (core's ndjsonloop)
// as a process over OS pipes, driven by a client that writes a prebuilt
// request line and reads a line. Every transport runs the full stack:
// a core/jsonrpc client over the transport's [core.Instance] and the SDK's
// echo server (core/examples/echo) behind it. So a ratio is what the
// transport and the stack together cost over the least a process round
// trip can cost on this machine, now.
//
// The product sides ([Product]) put the host itself beside its peers: a
// harness session's CallTool with its argument check, hook, trace and
// scrubbing ([Session]), the same server over a bare connection ([Bare]),
// go-plugin's net/rpc ([GoPluginNetRPC]) and the MCP Go SDK ([MCPSDK]);
// with the session side the lab also times session start with ten eager
// extensions against ten bare children ([StartTen]).
//
// How it measures:
//
//   - spawn→ready: Start until the first answer (initialize for a
//     transport, one echo for the floor), the sides in rotating order, after
//     one unmeasured start each (for WASM: the compile; later starts reuse
//     the compiled module, as a session does).
//   - idle: one call at a time with a pause before each (Options.IdleGap),
//     the sides taking turns call by call, so every call wakes a server
//     that went idle, as an agent's tool call does after seconds of model
//     time.
//   - hot: calls back to back from Concurrency callers, in rounds; in every
//     round each side runs one block, in rotating order; calls/s is the
//     median of the rounds and its ratio the median of the per-round ratios.
//
// The sides share the machine's noise because they alternate; the ratios
// are what to read, not the absolute figures.
package lab

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core"
	"yolop.dev/core/examples/echo/echoext"
	"yolop.dev/core/transporttest"
	"yolop.dev/transport/goplugin"
	"yolop.dev/transport/stdio"
	"yolop.dev/transport/wasm"
)

// Names of the sides in a [Report].
const (
	Floor    = "floor"
	Stdio    = core.TransportStdio
	GoPlugin = core.TransportGoPlugin
	WASM     = core.TransportWASM
	InMemory = "in-memory"
	// GoPluginGRPC is not a transport: a unary gRPC Echo call through
	// go-plugin's own client, no YEP — go-plugin as its users call it, for
	// comparison with YEP over go-plugin.
	GoPluginGRPC = "go-plugin-grpc"
)

// All is every side, in the order reports list them.
var All = []string{Floor, Stdio, GoPlugin, GoPluginGRPC, WASM, InMemory, Session, SessionMinimal, Bare, GoPluginNetRPC, MCPSDK}

// Product is the product comparison: the session beside the bare
// connection and the two peers (`yolop bench transports --transports
// session,bare,go-plugin-netrpc,mcp-sdk`).
var Product = []string{Session, Bare, GoPluginNetRPC, MCPSDK}

// ProductSplit adds SessionMinimal to Product, to split the host's
// overhead between the call path and the hook, trace and scrubbing.
var ProductSplit = []string{Session, SessionMinimal, Bare, GoPluginNetRPC, MCPSDK}

// Options configure [Run]. Exe is required; every other zero value is a
// default.
type Options struct {
	// Exe is a binary that runs [Serve] when given ServeArgs(mode): the
	// floor, stdio and go-plugin servers are copies of it.
	Exe string
	// ServeArgs are the arguments that make Exe serve mode. Nil means
	// {"serve-lab", mode}, as yolop takes them.
	ServeArgs func(mode string) []string
	// Transports selects sides by name (see [All]); the floor always runs.
	// Nil means all.
	Transports []string
	// Calls is how many hot calls each side makes per payload size and
	// concurrency, for payloads up to 4 KiB; larger payloads make
	// proportionally fewer (at least 20, and two per caller). Zero means
	// 2000.
	Calls int
	// IdleCalls is how many idle calls each side makes per payload size.
	// Zero means 200 (20 for payloads over 4 KiB).
	IdleCalls int
	// IdleGap is the pause before each idle call. Zero means 5ms.
	IdleGap time.Duration
	// Concurrency lists the numbers of concurrent callers of the hot
	// measurements. Nil means 1, 8 and 64.
	Concurrency []int
	// Sizes lists the payload sizes in bytes: the text each echo call sends
	// and gets back. Nil means 1 KiB and 1 MiB.
	Sizes []int
	// Spawns is how many spawn→ready samples each side takes. Zero means 10.
	Spawns int
	// Rounds is how many alternating rounds a hot measurement has. Zero
	// means 10.
	Rounds int
	// WASMModule is the echo server built for wasip1
	// (GOOS=wasip1 GOARCH=wasm go build yolop.dev/core/examples/echo).
	// Empty means build it with the go command, which works in a yolop
	// checkout (see GoDir); when that fails WASM is reported unavailable,
	// with the reason.
	WASMModule string
	// GoDir is where the go command runs to build the WASM module. Empty
	// means the working directory.
	GoDir string
	// Progress receives a line as each measurement starts. Nil means none.
	Progress io.Writer
	// Logger is the transports' logger. Nil means none.
	Logger hclog.Logger

	kit *sessionKit // the session side's packages, set by sides
	// For the tests: how many extensions the ten-eager start runs (zero
	// means ten), and no spawn→ready measurement.
	startN  int
	noSpawn bool
}

// An OptionError is an [Options] field whose value [Run] refuses.
type OptionError struct {
	// Field names the field: "Concurrency", "Sizes" or "Transports".
	Field string
	Err   error
}

func (e *OptionError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }

// Validate checks the fields [Run] refuses, returning an *[OptionError]
// for the first bad one: a concurrency outside 1 to 1024 callers, a
// payload size outside 1 byte to 64 MiB, a transport not in All[1:] (the
// floor always runs, so it is not selected).
func (o Options) Validate() error {
	for _, c := range o.Concurrency {
		if c < 1 || c > 1024 {
			return &OptionError{"Concurrency", fmt.Errorf("%d is out of range: 1 to 1024 callers", c)}
		}
	}
	for _, n := range o.Sizes {
		if n < 1 || n > 64<<20 {
			return &OptionError{"Sizes", fmt.Errorf("%d bytes is out of range: 1 byte to 64MiB", n)}
		}
	}
	for _, t := range o.Transports {
		if !slices.Contains(All[1:], t) {
			return &OptionError{"Transports", fmt.Errorf("no transport %q; want some of %s", t, strings.Join(All[1:], ", "))}
		}
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.ServeArgs == nil {
		o.ServeArgs = func(mode string) []string { return []string{"serve-lab", mode} }
	}
	if o.Transports == nil {
		o.Transports = All
	}
	if o.Calls <= 0 {
		o.Calls = 2000
	}
	if o.IdleGap <= 0 {
		o.IdleGap = 5 * time.Millisecond
	}
	if len(o.Concurrency) == 0 {
		o.Concurrency = []int{1, 8, 64}
	}
	o.Concurrency = slices.Sorted(slices.Values(o.Concurrency)) // one caller first: see floorClient.call
	o.Concurrency = slices.Compact(o.Concurrency)
	if len(o.Sizes) == 0 {
		o.Sizes = []int{1 << 10, 1 << 20}
	}
	if o.Spawns <= 0 {
		o.Spawns = 10
	}
	if o.Rounds <= 0 {
		o.Rounds = 10
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	return o
}

// A Report is what [Run] measured.
type Report struct {
	Started time.Time      `json:"started"`
	Machine Machine        `json:"machine"`
	Sides   []Availability `json:"sides"`
	Spawn   []SpawnResult  `json:"spawn"`
	// StartTen is session start with ten eager extensions against ten
	// bare children, measured when the session side runs.
	StartTen   *StartTen    `json:"start_ten,omitempty"`
	Calls      []CallResult `json:"calls"`
	Settings   Settings     `json:"settings"`
	DurationMS float64      `json:"duration_ms"`
}

// Settings are the options a report was measured with.
type Settings struct {
	Calls       int     `json:"calls"`
	Rounds      int     `json:"rounds"`
	Spawns      int     `json:"spawns"`
	IdleGapMS   float64 `json:"idle_gap_ms"`
	Concurrency []int   `json:"concurrency"`
	Sizes       []int   `json:"sizes"`
}

// Machine describes where the report was measured.
type Machine struct {
	GOOS      string `json:"goos"`
	GOARCH    string `json:"goarch"`
	CPUs      int    `json:"cpus"`
	Go        string `json:"go"`
	LoadStart string `json:"load_start,omitempty"` // /proc/loadavg's three figures
	LoadEnd   string `json:"load_end,omitempty"`
}

// Availability says whether a side ran, and why not.
type Availability struct {
	Name      string `json:"name"`
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
}

// A SpawnResult is one side's spawn→ready.
type SpawnResult struct {
	Side    string  `json:"side"`
	Samples int     `json:"samples"`
	P50MS   float64 `json:"p50_ms"`
	Ratio   float64 `json:"ratio"` // P50MS ÷ the floor's
}

// A CallResult is one side's calls in one measurement.
type CallResult struct {
	Side        string  `json:"side"`
	Mode        string  `json:"mode"` // "hot" or "idle"
	Size        int     `json:"size"`
	Concurrency int     `json:"concurrency"`
	Calls       int     `json:"calls"`
	P50US       float64 `json:"p50_us"`
	P99US       float64 `json:"p99_us"`
	Rounds      int     `json:"rounds,omitempty"`        // hot only: alternating rounds
	CallsPerSec float64 `json:"calls_per_sec,omitempty"` // hot only
	P50Ratio    float64 `json:"p50_ratio"`
	P99Ratio    float64 `json:"p99_ratio"`
	RateRatio   float64 `json:"calls_per_sec_ratio,omitempty"`
}

// Run measures every available side and returns the report. It fails when
// a side that started fails a call (naming it), or when ctx ends.
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.Exe == "" {
		return nil, fmt.Errorf("transport lab: no server binary (Options.Exe)")
	}
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("transport lab: %w", err)
	}
	o = o.withDefaults()
	rep := &Report{Started: time.Now(),
		Settings: Settings{Calls: o.Calls, Rounds: o.Rounds, Spawns: o.Spawns, IdleGapMS: ms(o.IdleGap), Concurrency: o.Concurrency, Sizes: o.Sizes},
		Machine:  Machine{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(), Go: runtime.Version(), LoadStart: loadAvg()}}
	sides, avail, cleanup, err := o.sides(ctx)
	defer cleanup()
	rep.Sides = avail
	if err != nil {
		return rep, err
	}
	if slices.Contains(o.Transports, Session) {
		fmt.Fprintf(o.Progress, "session start: ten eager extensions against ten bare children, %d starts of each\n", o.Spawns)
		if rep.StartTen, err = measureStartTen(ctx, o, o.kit, o.Spawns); err != nil {
			return rep, fmt.Errorf("%s: %w", Session, err)
		}
	}

	if !o.noSpawn {
		fmt.Fprintf(o.Progress, "spawn→ready: %d starts of each side\n", o.Spawns)
		if rep.Spawn, err = measureSpawn(ctx, sides, o.Spawns); err != nil {
			return rep, err
		}
	}
	clients := make([]client, len(sides))
	defer func() {
		for _, c := range clients {
			if c != nil {
				c.close()
			}
		}
	}()
	for i, s := range sides {
		if clients[i], err = s.start(ctx); err != nil {
			return rep, fmt.Errorf("%s: %w", s.name, err)
		}
	}
	for _, size := range o.Sizes {
		p := newPayload(size)
		n := o.IdleCalls
		if n <= 0 {
			n = 200
			if size > 4<<10 {
				n = 20
			}
		}
		fmt.Fprintf(o.Progress, "idle, %s: %d calls of each side\n", SizeString(size), n)
		rs, err := measureIdle(ctx, sides, clients, p, n, o.IdleGap)
		if err != nil {
			return rep, err
		}
		rep.Calls = append(rep.Calls, rs...)
	}
	for _, conc := range o.Concurrency {
		for _, size := range o.Sizes {
			p := newPayload(size)
			n := o.Calls
			if size > 4<<10 {
				n = max(o.Calls*(4<<10)/size, 20)
			}
			n = max(n, 2*conc, o.Rounds)
			fmt.Fprintf(o.Progress, "hot, %s, %d caller(s): about %d calls of each side\n", SizeString(size), conc, n)
			rs, err := measureHot(ctx, sides, clients, p, n, conc, o.Rounds)
			if err != nil {
				return rep, err
			}
			rep.Calls = append(rep.Calls, rs...)
		}
	}
	rep.Machine.LoadEnd = loadAvg()
	rep.DurationMS = ms(time.Since(rep.Started))
	return rep, nil
}

// sides builds the sides to measure, the floor first.
func (o *Options) sides(ctx context.Context) ([]side, []Availability, func(), error) {
	var cleanups []func()
	cleanup := func() {
		for _, f := range slices.Backward(cleanups) {
			f()
		}
	}
	spec := func(name, mode string) core.ServerSpec {
		return core.ServerSpec{Name: name, Command: o.Exe, Args: o.ServeArgs(mode), Env: map[string]string{"GORACE": "atexit_sleep_ms=0"}}
	}
	sides := []side{{name: Floor, start: func(ctx context.Context) (client, error) {
		return startFloor(ctx, o.Exe, o.ServeArgs(ServeFloor))
	}}}
	avail := []Availability{{Name: Floor, Available: true}}
	for _, name := range All[1:] {
		if !slices.Contains(o.Transports, name) {
			avail = append(avail, Availability{Name: name, Reason: "not selected"})
			continue
		}
		var start func(ctx context.Context) (client, error)
		switch name {
		case GoPluginGRPC:
			start = func(ctx context.Context) (client, error) {
				return startGoPluginGRPC(ctx, o.Exe, o.ServeArgs(ServeGoPluginGRPC))
			}
		case Session, SessionMinimal:
			if o.kit == nil {
				k, done, err := o.newSessionKit()
				cleanups = append(cleanups, done)
				if err != nil {
					return nil, avail, cleanup, err
				}
				o.kit = k
			}
			k, minimal := o.kit, name == SessionMinimal
			start = func(ctx context.Context) (client, error) { return startSession(ctx, k, minimal) }
		case Bare:
			start = func(ctx context.Context) (client, error) { return startBare(ctx, o.Exe, o.ServeArgs(ServeStdio)) }
		case GoPluginNetRPC:
			start = func(ctx context.Context) (client, error) {
				return startGoPluginNetRPC(ctx, o.Exe, o.ServeArgs(ServeGoPluginNetRPC))
			}
		case MCPSDK:
			start = func(ctx context.Context) (client, error) { return startMCPSDK(ctx, o.Exe, o.ServeArgs(ServeMCPSDK)) }
		}
		if start != nil {
			sides = append(sides, side{name: name, start: start})
			avail = append(avail, Availability{Name: name, Available: true})
			continue
		}
		var tr core.Transport
		var s core.ServerSpec
		switch name {
		case Stdio:
			tr, s = stdio.New(stdio.Options{Logger: o.Logger}), spec("lab-stdio", ServeStdio)
		case GoPlugin:
			tr, s = goplugin.New(goplugin.Options{Logger: o.Logger}), spec("lab-go-plugin", ServeGoPlugin)
			s.Transport = core.TransportGoPlugin
		case WASM:
			mod, why, done := o.wasmModule(ctx)
			cleanups = append(cleanups, done)
			if mod == "" {
				avail = append(avail, Availability{Name: name, Reason: why})
				continue
			}
			cache, err := os.MkdirTemp("", "yolop-lab-wasm-cache-")
			if err != nil {
				return nil, avail, cleanup, err
			}
			wt := wasm.New(wasm.Options{Logger: o.Logger, CacheDir: cache})
			cleanups = append(cleanups, func() { wt.Close(); os.RemoveAll(cache) })
			tr, s = wt, core.ServerSpec{Name: "lab-wasm", Transport: core.TransportWASM, Module: mod}
		case InMemory:
			tr = &transporttest.Transport{Servers: map[string]transporttest.Server{"lab-in-memory": func(ctx context.Context, r io.Reader, w io.Writer) error {
				return echoext.New(hclog.NewNullLogger()).ServeConn(ctx, r, w)
			}}}
			s = core.ServerSpec{Name: "lab-in-memory"}
		}
		sides = append(sides, side{name: name, start: func(ctx context.Context) (client, error) { return startStack(ctx, tr, s) }})
		avail = append(avail, Availability{Name: name, Available: true})
	}
	return sides, avail, cleanup, nil
}

// wasmModule returns the echo module to run, building it when none was
// given, or why there is none.
func (o Options) wasmModule(ctx context.Context) (path, why string, cleanup func()) {
	if o.WASMModule != "" {
		if _, err := os.Stat(o.WASMModule); err != nil {
			return "", fmt.Sprintf("the module %s: %v", o.WASMModule, err), func() {}
		}
		return o.WASMModule, "", func() {}
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return "", "no echo module to run: pass one (built with GOOS=wasip1 GOARCH=wasm go build yolop.dev/core/examples/echo), or install Go and run this from a yolop checkout", func() {}
	}
	dir, err := os.MkdirTemp("", "yolop-lab-wasm-")
	if err != nil {
		return "", err.Error(), func() {}
	}
	done := func() { os.RemoveAll(dir) }
	fmt.Fprintln(o.Progress, "building the echo server for wasip1 (go build yolop.dev/core/examples/echo)")
	mod := filepath.Join(dir, "echo.wasm")
	cmd := exec.CommandContext(ctx, goCmd, "build", "-o", mod, "yolop.dev/core/examples/echo")
	cmd.Dir = o.GoDir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if out, err := cmd.CombinedOutput(); err != nil {
		first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		return "", fmt.Sprintf("building the echo module failed (%v: %s); pass a built module, or run this from a yolop checkout", err, first), done
	}
	return mod, "", done
}

func measureSpawn(ctx context.Context, sides []side, samples int) ([]SpawnResult, error) {
	times := make([][]time.Duration, len(sides))
	for i, s := range sides { // one unmeasured start each
		c, err := s.start(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		c.close()
		times[i] = make([]time.Duration, 0, samples)
	}
	for r := range samples {
		for k := range sides {
			i := (k + r) % len(sides)
			t0 := time.Now()
			c, err := sides[i].start(ctx)
			d := time.Since(t0)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", sides[i].name, err)
			}
			c.close()
			times[i] = append(times[i], d)
		}
	}
	floor := percentile(times[0], 50)
	out := make([]SpawnResult, len(sides))
	for i, s := range sides {
		p := percentile(times[i], 50)
		out[i] = SpawnResult{Side: s.name, Samples: samples, P50MS: ms(p), Ratio: ratio(p, floor)}
	}
	return out, nil
}

func measureIdle(ctx context.Context, sides []side, clients []client, p *payload, n int, gap time.Duration) ([]CallResult, error) {
	lat := make([][]time.Duration, len(sides))
	for r := range n {
		for k := range sides {
			i := (k + r) % len(sides)
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(gap):
			}
			t0 := time.Now()
			if err := clients[i].call(ctx, p, 1); err != nil {
				return nil, fmt.Errorf("%s: %w", sides[i].name, err)
			}
			lat[i] = append(lat[i], time.Since(t0))
		}
	}
	return results(sides, "idle", len(p.text), 1, lat, nil, nil), nil
}

func measureHot(ctx context.Context, sides []side, clients []client, p *payload, n, conc, rounds int) ([]CallResult, error) {
	// Every caller gets a call in every block: fewer rounds rather than
	// more calls than asked for.
	rounds = max(1, min(rounds, n/conc))
	block := max((n+rounds-1)/rounds, conc)
	for i := range sides { // warm up
		if _, err := runBlock(ctx, clients[i], p, conc, min(block, max(conc, 20)), nil); err != nil {
			return nil, fmt.Errorf("%s: %w", sides[i].name, err)
		}
	}
	lat := make([][]time.Duration, len(sides))
	rates := make([][]float64, len(sides))
	for r := range rounds {
		for k := range sides {
			i := (k + r) % len(sides)
			rec := make([]time.Duration, block)
			d, err := runBlock(ctx, clients[i], p, conc, block, rec)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", sides[i].name, err)
			}
			lat[i] = append(lat[i], rec...)
			rates[i] = append(rates[i], float64(block)/d.Seconds())
		}
	}
	rateRatios := make([][]float64, len(sides))
	for i := range sides {
		for r := range rounds {
			rateRatios[i] = append(rateRatios[i], rates[i][r]/rates[0][r])
		}
	}
	return results(sides, "hot", len(p.text), conc, lat, rates, rateRatios), nil
}

// runBlock makes n calls from conc callers and returns the elapsed time;
// rec, when not nil, receives each call's latency.
func runBlock(ctx context.Context, c client, p *payload, conc, n int, rec []time.Duration) (time.Duration, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	t0 := time.Now()
	for range conc {
		wg.Go(func() {
			for {
				k := int(next.Add(1)) - 1
				if k >= n {
					return
				}
				s := time.Now()
				if err := c.call(ctx, p, conc); err != nil {
					once.Do(func() { first = err })
					next.Store(int64(n))
					return
				}
				if rec != nil {
					rec[k] = time.Since(s)
				}
			}
		})
	}
	wg.Wait()
	return time.Since(t0), first
}

func results(sides []side, mode string, size, conc int, lat [][]time.Duration, rates, rateRatios [][]float64) []CallResult {
	f50, f99 := percentile(lat[0], 50), percentile(lat[0], 99)
	out := make([]CallResult, len(sides))
	for i, s := range sides {
		p50, p99 := percentile(lat[i], 50), percentile(lat[i], 99)
		out[i] = CallResult{Side: s.name, Mode: mode, Size: size, Concurrency: conc, Calls: len(lat[i]),
			P50US: us(p50), P99US: us(p99), P50Ratio: ratio(p50, f50), P99Ratio: ratio(p99, f99)}
		if rates != nil {
			out[i].Rounds = len(rates[i])
			out[i].CallsPerSec = median(rates[i])
			out[i].RateRatio = median(rateRatios[i])
		}
	}
	return out
}

func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

func median(f []float64) float64 {
	if len(f) == 0 {
		return 0
	}
	s := slices.Clone(f)
	slices.Sort(s)
	return s[len(s)/2]
}

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// loadAvg is /proc/loadavg's three load averages, or "" where there is none.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
