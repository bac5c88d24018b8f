package wasm_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"yolop.dev/core"
	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/yep"
	"yolop.dev/transport/wasm"
)

// BenchmarkToolCallRoundTrip measures one tool/call round trip to a wasm
// guest beside the floor of core/sdk's benchmark, in the same run: the
// hand-written ndjson loop (core/internal/testservers/ndjsonloop) as a
// native process over OS pipes, driven by a client that writes a line and
// reads a line. The sides:
//
//	loop       the floor: native ndjsonloop, minimal client
//	wasmloop   the same ndjsonloop built for wasip1, in this transport,
//	           same client: what running in wazero costs by itself
//	stack      the SDK's echo example as a native process with a
//	           core/jsonrpc client: the full stack as transport/stdio runs it
//	wasmstack  the same echo example as a wasm guest with a core/jsonrpc
//	           client: the full stack in this transport
//	wasmloop-unguarded, wasmstack-unguarded
//	           the two wasm sides compiled without the CPU guard (wazero's
//	           close-on-context-done, which calls out of the guest's code
//	           at every loop back-edge): what the guard costs
//
// Sub-benchmarks:
//
//	p50-hot    sequential calls in blocks of 50, the sides in rotating
//	           order; each side's p50 and p99 in µs and the ratios of p50s
//	           to the loop's (and wasmstack/stack)
//	callers=8  calls/s with eight concurrent callers (the loop's client
//	           demultiplexes by id over its one pipe), in ten alternating
//	           rounds; medians and the median of the per-round ratios
//
//	go test -run '^$' -bench ToolCallRoundTrip -benchtime 2s ./transport/wasm
func BenchmarkToolCallRoundTrip(b *testing.B) {
	dir := b.TempDir()
	loopBin := buildNative(b, "yolop.dev/core/internal/testservers/ndjsonloop", filepath.Join(dir, "ndjsonloop"))
	echoBin := buildNative(b, "yolop.dev/core/examples/echo", filepath.Join(dir, "echo"))
	tr := newTransport(b, wasm.Options{})

	loop := newLoopClient(b, startNative(b, loopBin))
	wasmLoop := newLoopClient(b, start(b, tr, "loop", loopWasm, nil))
	stack := newStackClient(b, startNative(b, echoBin))
	wasmStack := newStackClient(b, start(b, tr, "echo", echoWasm, nil))
	unguarded := wasm.NewUnguardedForTest(wasm.Options{CacheDir: sharedCache})
	b.Cleanup(func() { unguarded.Close() })
	wasmLoopU := newLoopClient(b, start(b, unguarded, "loop", loopWasm, nil))
	wasmStackU := newStackClient(b, start(b, unguarded, "echo", echoWasm, nil))

	sides := []side{
		{"loop", func() { loop.call(b) }},
		{"wasmloop", func() { wasmLoop.call(b) }},
		{"stack", func() { stack.call(b) }},
		{"wasmstack", func() { wasmStack.call(b) }},
		{"wasmloop-unguarded", func() { wasmLoopU.call(b) }},
		{"wasmstack-unguarded", func() { wasmStackU.call(b) }},
	}
	for range 200 { // warm up
		for _, s := range sides {
			s.call()
		}
	}

	b.Run("p50-hot", func(b *testing.B) {
		const block = 50
		times := make([][]time.Duration, len(sides))
		b.ResetTimer()
		for round := 0; len(times[0]) < b.N; round++ {
			for j := range sides {
				k := (round + j) % len(sides)
				for range block {
					t0 := time.Now()
					sides[k].call()
					times[k] = append(times[k], time.Since(t0))
				}
			}
		}
		b.StopTimer()
		p := make([]float64, len(sides))
		for k, s := range sides {
			p[k] = us(percentile(times[k], 50))
			b.ReportMetric(p[k], s.name+"-p50-µs")
			b.ReportMetric(us(percentile(times[k], 99)), s.name+"-p99-µs")
		}
		b.ReportMetric(p[1]/p[0], "wasmloop/loop-p50")
		b.ReportMetric(p[2]/p[0], "stack/loop-p50")
		b.ReportMetric(p[3]/p[0], "wasmstack/loop-p50")
		b.ReportMetric(p[3]/p[2], "wasmstack/stack-p50")
		b.ReportMetric(p[1]/p[4], "wasmloop/unguarded-p50")
		b.ReportMetric(p[3]/p[5], "wasmstack/unguarded-p50")
	})

	b.Run("callers=8", func(b *testing.B) {
		const rounds, callers = 10, 8
		per := max(b.N/rounds, callers)
		muxSides := []side{
			{"loop", func() { loop.callMux(b) }},
			{"stack", func() { stack.call(b) }},
			{"wasmstack", func() { wasmStack.call(b) }},
			{"wasmstack-unguarded", func() { wasmStackU.call(b) }},
		}
		rates := make([][]float64, len(muxSides))
		var vsLoop, vsStack []float64
		b.ResetTimer()
		for round := range rounds {
			r := make([]float64, len(muxSides))
			for j := range muxSides {
				k := (round + j) % len(muxSides)
				r[k] = float64(per) / parallel(callers, per, muxSides[k].call).Seconds()
				rates[k] = append(rates[k], r[k])
			}
			vsLoop, vsStack = append(vsLoop, r[2]/r[0]), append(vsStack, r[2]/r[1])
		}
		b.StopTimer()
		for k, s := range muxSides {
			b.ReportMetric(median(rates[k]), s.name+"-calls/s")
		}
		b.ReportMetric(median(vsLoop), "wasmstack/loop-calls/s")
		b.ReportMetric(median(vsStack), "wasmstack/stack-calls/s")
	})
}

// BenchmarkStart measures what a Start costs, from Start until the guest
// has answered initialize, for the SDK's echo example, in three modes in
// rotating order:
//
//	cold    a new Transport and an empty cache directory: a full compile
//	disk    a new Transport on a warm cache directory: the compiled code is
//	        loaded, verified first (the instantiate-from-cache path of a
//	        new session or process)
//	memory  a further Start on a Transport that has the module already
//
// It reports each mode's median Start time and time to the initialize
// answer in ms, and the ratios of the disk and memory medians to cold.
//
//	go test -run '^$' -bench Start -benchtime 10x ./transport/wasm
func BenchmarkStart(b *testing.B) {
	modes := []string{"cold", "disk", "memory"}
	warm := filepath.Join(b.TempDir(), "warm")
	resident := newTransport(b, wasm.Options{CacheDir: warm})
	startOnce(b, resident) // fills the warm cache, and resident's memory
	starts := make([][]time.Duration, len(modes))
	ready := make([][]time.Duration, len(modes))
	i := 0
	for b.Loop() {
		for j := range modes {
			k := (i + j) % len(modes)
			tr := resident
			switch modes[k] {
			case "cold":
				tr = wasm.New(wasm.Options{CacheDir: filepath.Join(b.TempDir(), "cold")})
			case "disk":
				tr = wasm.New(wasm.Options{CacheDir: warm})
			}
			s, r := startOnce(b, tr)
			starts[k], ready[k] = append(starts[k], s), append(ready[k], r)
			if tr != resident {
				tr.Close()
			}
		}
		i++
	}
	med := func(d []time.Duration) float64 { return float64(percentile(d, 50)) / float64(time.Millisecond) }
	for k, m := range modes {
		b.ReportMetric(med(starts[k]), m+"-start-ms")
		b.ReportMetric(med(ready[k]), m+"-ready-ms")
	}
	b.ReportMetric(med(ready[1])/med(ready[0]), "disk/cold-ready")
	b.ReportMetric(med(ready[2])/med(ready[0]), "memory/cold-ready")
}

// startOnce starts the echo guest on tr and returns how long Start took
// and how long until the initialize answer.
func startOnce(b *testing.B, tr *wasm.Transport) (start, ready time.Duration) {
	t0 := time.Now()
	inst, err := tr.Start(context.Background(), core.ServerSpec{Name: "echo", Command: echoWasm})
	if err != nil {
		b.Fatal(err)
	}
	start = time.Since(t0)
	defer inst.Kill()
	if _, err := io.WriteString(inst.Stdin(), `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocol_version":"1.0"}}`+"\n"); err != nil {
		b.Fatal(err)
	}
	if line, err := bufio.NewReader(inst.Stdout()).ReadSlice('\n'); err != nil || !bytes.Contains(line, []byte(`"result"`)) {
		b.Fatalf("initialize: %s %v", line, err)
	}
	return start, time.Since(t0)
}

// buildNative compiles a main package for the host.
func buildNative(b *testing.B, pkg, out string) string {
	cmd := exec.Command(goTool(), "build", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if o, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build %s: %v\n%s", pkg, err, o)
	}
	return out
}

// A nativeProc is a subprocess with pipes, as an instance offers them.
type nativeProc struct {
	stdin  io.WriteCloser
	stdout io.Reader
}

func startNative(b *testing.B, bin string) nativeProc {
	cmd := exec.Command(bin)
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = outW, os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	outW.Close()
	b.Cleanup(func() {
		in.Close()
		_ = cmd.Wait()
		outR.Close()
	})
	return nativeProc{stdin: in, stdout: outR}
}

type streams interface {
	Stdin() io.WriteCloser
	Stdout() io.Reader
}

func (p nativeProc) Stdin() io.WriteCloser { return p.stdin }
func (p nativeProc) Stdout() io.Reader     { return p.stdout }

// A side is one client ⇄ server pair under measurement.
type side struct {
	name string
	call func()
}

// loopClient is the floor's client: it writes a request line and reads a
// response line. Concurrent callers (callMux) share the pipe: a reader
// goroutine hands each line to the caller whose id it carries.
type loopClient struct {
	in   io.Writer
	out  *bufio.Reader
	next atomic.Int64
	buf  []byte

	wmu     sync.Mutex
	mu      sync.Mutex
	waiting map[int64]chan struct{}
	muxOnce sync.Once
}

func newLoopClient(b *testing.B, s streams) *loopClient {
	return &loopClient{in: s.Stdin(), out: bufio.NewReaderSize(s.Stdout(), 64<<10), waiting: map[int64]chan struct{}{}}
}

func (c *loopClient) request(buf []byte, id int64) []byte {
	buf = append(buf[:0], `{"jsonrpc":"2.0","id":`...)
	buf = strconv.AppendInt(buf, id, 10)
	return append(buf, `,"method":"tool/call","params":{"tool_call_id":"t","name":"echo","args":{"text":"hello"}}}`+"\n"...)
}

func (c *loopClient) call(b *testing.B) {
	c.buf = c.request(c.buf, c.next.Add(1))
	if _, err := c.in.Write(c.buf); err != nil {
		b.Fatal(err)
	}
	if line, err := c.out.ReadSlice('\n'); err != nil || !bytes.Contains(line, []byte(`"output":"hello"`)) {
		b.Fatalf("loop answered %q, %v", line, err)
	}
}

func (c *loopClient) callMux(b *testing.B) {
	c.muxOnce.Do(func() { go c.demux() })
	id := c.next.Add(1)
	ch := make(chan struct{})
	c.mu.Lock()
	c.waiting[id] = ch
	c.mu.Unlock()
	c.wmu.Lock()
	c.buf = c.request(c.buf, id)
	_, err := c.in.Write(c.buf)
	c.wmu.Unlock()
	if err != nil {
		b.Fatal(err)
	}
	<-ch
}

func (c *loopClient) demux() {
	for {
		line, err := c.out.ReadSlice('\n')
		if err != nil {
			return
		}
		var resp struct {
			ID int64 `json:"id"`
		}
		if json.Unmarshal(line, &resp) != nil {
			continue
		}
		c.mu.Lock()
		ch := c.waiting[resp.ID]
		delete(c.waiting, resp.ID)
		c.mu.Unlock()
		if ch != nil {
			close(ch)
		}
	}
}

// stackClient is the full stack's client: a core/jsonrpc connection.
type stackClient struct {
	conn *jsonrpc.Conn
	args json.RawMessage
}

func newStackClient(b *testing.B, s streams) *stackClient {
	conn := jsonrpc.NewConn(s.Stdout(), s.Stdin(), jsonrpc.Options{Closer: s.Stdin()})
	b.Cleanup(func() {
		conn.Close()
		conn.Wait()
	})
	err := conn.Call(context.Background(), yep.MethodInitialize, yep.InitializeParams{ProtocolVersion: yep.ProtocolVersion, Capabilities: yep.Capabilities{yep.CapCancel}}, nil)
	if err != nil {
		b.Fatalf("initialize: %v", err)
	}
	return &stackClient{conn: conn, args: json.RawMessage(`{"text":"hello"}`)}
}

func (c *stackClient) call(b *testing.B) {
	var res yep.ToolResult
	if err := c.conn.Call(context.Background(), yep.MethodToolCall, yep.ToolCallParams{ToolCallID: "t", Name: "echo", Args: c.args}, &res); err != nil || res.Output != "hello" {
		b.Fatalf("stack answered %+v, %v", res, err)
	}
}

// parallel runs n calls of f spread over k goroutines and returns the
// elapsed time.
func parallel(k, n int, f func()) time.Duration {
	var wg sync.WaitGroup
	var left atomic.Int64
	left.Store(int64(n))
	t0 := time.Now()
	for range k {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				f()
			}
		})
	}
	wg.Wait()
	return time.Since(t0)
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
	s := slices.Clone(f)
	slices.Sort(s)
	return s[len(s)/2]
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
