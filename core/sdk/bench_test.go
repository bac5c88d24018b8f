package sdk_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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

	"yolop.dev/core/internal/testservers"
	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/yep"
)

// BenchmarkToolCallRoundTrip measures one tool/call round trip over a real
// subprocess through the full stack — the echo example server (SDK) and a
// core/jsonrpc client — beside a minimal hand-written ndjson echo loop
// (internal/testservers/ndjsonloop, with a client that writes a line and
// reads a line) over the same kind of pipe, in the same run.
//
// Sub-benchmarks:
//
//	p50-hot    sequential calls in alternating blocks of 50 (loop, then
//	           stack): the p50 round trip of each in µs, the ratio
//	           stack/loop (aim ≤ 1.3), p99s, and the CPU time per call
//	           of client and server together.
//	p50-idle   the same with blocks of one call, so every call wakes
//	           processes that idled during the other side's call.
//	p50-hot-sdkserver  the loop's minimal client against the SDK server,
//	           to split the overhead between the client and the server.
//	callers=1  calls/s with one caller, loop and stack, and the ratio
//	callers=8  calls/s with eight concurrent callers (the loop's client
//	           multiplexes them over its one pipe by id), and the ratio
//	           stack/loop (aim ≥ 0.8).
//
// Run it with
//
//	go test -run '^$' -bench ToolCallRoundTrip -benchtime 2s ./core/sdk
func BenchmarkToolCallRoundTrip(b *testing.B) {
	dir := b.TempDir()
	echoBin := testservers.Build(b, "yolop.dev/core/examples/echo", filepath.Join(dir, "yolop-extension-echo"))
	loopBin := testservers.Build(b, "yolop.dev/core/internal/testservers/ndjsonloop", filepath.Join(dir, "ndjsonloop"))

	stack := startStack(b, echoBin)
	loop := startLoop(b, loopBin)

	// Warm both up and check they answer the same thing.
	for range 200 {
		if out := stack.call(b); out != "hello" {
			b.Fatalf("stack answered %q", out)
		}
		if out := loop.call(b); !bytes.Contains(out, []byte(`"output":"hello"`)) {
			b.Fatalf("loop answered %s", out)
		}
	}

	// p50-hot: sequential calls back to back, in alternating blocks of 50
	// (both processes stay awake, as during a burst of calls).
	// p50-idle: alternating single calls, so each call wakes processes
	// that went idle during the other side's call (as an agent's tool call
	// does after seconds of model time).
	loopSide := side{"loop", loop.pid, func() { loop.call(b) }}
	stackSide := side{"stack", stack.pid, func() { stack.call(b) }}
	b.Run("p50-hot", func(b *testing.B) { latency(b, 50, loopSide, stackSide) })
	b.Run("p50-idle", func(b *testing.B) { latency(b, 1, loopSide, stackSide) })

	// p50-gap10ms: each call after 10 ms of silence (the machine's
	// threads and CPUs have gone to sleep, as between an agent's tool
	// calls), loop and stack alternating.
	b.Run("p50-gap10ms", func(b *testing.B) {
		var ls, ss []time.Duration
		for range b.N {
			for _, sd := range []struct {
				call func()
				into *[]time.Duration
			}{{loopSide.call, &ls}, {stackSide.call, &ss}} {
				b.StopTimer()
				time.Sleep(10 * time.Millisecond)
				b.StartTimer()
				t0 := time.Now()
				sd.call()
				*sd.into = append(*sd.into, time.Since(t0))
			}
		}
		lp, sp := pct(ls, 50), pct(ss, 50)
		b.ReportMetric(float64(lp.Nanoseconds())/1e3, "loop-p50-µs")
		b.ReportMetric(float64(sp.Nanoseconds())/1e3, "stack-p50-µs")
		b.ReportMetric(float64(sp)/float64(lp), "stack/loop-p50")
	})

	// p50-hot-sdkserver splits the overhead: the loop's minimal client
	// against the SDK echo server, so stack − sdkserver is the jsonrpc
	// client's share and sdkserver − loop the SDK server's.
	sdkServer := startLoop(b, echoBin)
	sdkServer.initialize(b)
	b.Run("p50-hot-sdkserver", func(b *testing.B) {
		latency(b, 50, loopSide, side{"sdkserver", sdkServer.pid, func() { sdkServer.call(b) }})
	})

	for _, callers := range []int{1, 8} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			// Alternate short rounds so machine noise (the machine may be
			// shared) hits both sides alike, and report medians over the
			// rounds: the ratio is the median of the per-round ratios.
			const rounds = 10
			per := max(b.N/rounds, callers)
			loopCall := func() { loop.callMux(b) }
			if callers == 1 {
				loopCall = func() { loop.call(b) } // no demultiplexing needed
			}
			var lrs, srs, ratios []float64
			b.ResetTimer()
			for range rounds {
				lr := float64(per) / parallel(callers, per, loopCall).Seconds()
				sr := float64(per) / parallel(callers, per, func() { stack.call(b) }).Seconds()
				lrs, srs, ratios = append(lrs, lr), append(srs, sr), append(ratios, sr/lr)
			}
			b.StopTimer()
			b.ReportMetric(median(lrs), "loop-calls/s")
			b.ReportMetric(median(srs), "stack-calls/s")
			b.ReportMetric(median(ratios), "stack/loop-calls/s")
		})
	}
}

// A side is one client ⇄ server pair under measurement.
type side struct {
	name string // metric prefix
	pid  int    // server process
	call func()
}

// latency measures sequential round trips of two sides in alternating
// blocks of block calls (so machine noise hits both alike) and reports
// their p50s, the ratio y/x, p99s, and the CPU time per call of client and
// server together: a figure the machine's load moves less than latency.
// Each server only works during its own blocks; the client's CPU time is
// split by block.
func latency(b *testing.B, block int, x, y side) {
	xs := make([]time.Duration, 0, b.N+block)
	ys := make([]time.Duration, 0, b.N+block)
	xSrv0, _ := testservers.ProcessCPU(x.pid)
	ySrv0, _ := testservers.ProcessCPU(y.pid)
	var xCli, yCli time.Duration
	b.ResetTimer()
	for len(xs) < b.N {
		c0 := testservers.SelfCPU()
		for range block {
			t0 := time.Now()
			x.call()
			xs = append(xs, time.Since(t0))
		}
		c1 := testservers.SelfCPU()
		for range block {
			t0 := time.Now()
			y.call()
			ys = append(ys, time.Since(t0))
		}
		c2 := testservers.SelfCPU()
		xCli += c1 - c0
		yCli += c2 - c1
	}
	b.StopTimer()
	xSrv1, ok1 := testservers.ProcessCPU(x.pid)
	ySrv1, ok2 := testservers.ProcessCPU(y.pid)
	if ok1 && ok2 && xCli > 0 {
		n := float64(len(xs))
		b.ReportMetric(us(xCli+xSrv1-xSrv0)/n, x.name+"-cpu-µs/call")
		b.ReportMetric(us(yCli+ySrv1-ySrv0)/n, y.name+"-cpu-µs/call")
	}
	xp, yp := p50(xs), p50(ys)
	b.ReportMetric(us(xp), x.name+"-p50-µs")
	b.ReportMetric(us(yp), y.name+"-p50-µs")
	b.ReportMetric(float64(yp)/float64(xp), y.name+"/"+x.name+"-p50")
	b.ReportMetric(us(p99(xs)), x.name+"-p99-µs")
	b.ReportMetric(us(p99(ys)), y.name+"-p99-µs")
}

// parallel runs n calls of f spread over k goroutines and returns the
// elapsed time.
func parallel(k, n int, f func()) time.Duration {
	var wg sync.WaitGroup
	var left atomic.Int64
	left.Store(int64(n))
	t0 := time.Now()
	for range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				f()
			}
		}()
	}
	wg.Wait()
	return time.Since(t0)
}

func p50(d []time.Duration) time.Duration { return percentile(d, 50) }
func p99(d []time.Duration) time.Duration { return percentile(d, 99) }

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

// stackClient is the full stack: a jsonrpc.Conn to the echo server.
type stackClient struct {
	pid  int
	conn *jsonrpc.Conn
	args json.RawMessage
}

func startStack(b *testing.B, bin string) *stackClient {
	p := testservers.Start(b, jsonrpc.Options{}, bin)
	ctx := context.Background()
	if err := p.Conn.Call(ctx, yep.MethodInitialize, yep.InitializeParams{ProtocolVersion: yep.ProtocolVersion, Capabilities: yep.Capabilities{yep.CapCancel, yep.CapStreaming}}, nil); err != nil {
		b.Fatalf("initialize: %v", err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = p.Conn.Call(ctx, yep.MethodShutdown, nil, nil)
		_ = p.Conn.Notify(ctx, yep.MethodExit, nil)
		_ = p.Wait(ctx)
	})
	return &stackClient{pid: p.Cmd.Process.Pid, conn: p.Conn, args: json.RawMessage(`{"text":"hello"}`)}
}

func (c *stackClient) call(b *testing.B) string {
	var res yep.ToolResult
	if err := c.conn.Call(context.Background(), yep.MethodToolCall, yep.ToolCallParams{ToolCallID: "t", Name: "echo", Args: c.args}, &res); err != nil {
		b.Fatal(err)
	}
	return res.Output
}

// loopClient is the baseline client: it writes a request line and reads a
// response line. Concurrent callers (callMux) share the pipe: a reader
// goroutine hands each line to the caller whose id it carries.
type loopClient struct {
	pid  int
	in   io.Writer
	out  *bufio.Reader
	next atomic.Int64

	wmu     sync.Mutex
	mu      sync.Mutex
	waiting map[int64]chan []byte
	muxOnce sync.Once
	buf     []byte
}

func startLoop(b *testing.B, bin string) *loopClient {
	cmd := exec.Command(bin)
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stdout = outW
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	outW.Close()
	c := &loopClient{pid: cmd.Process.Pid, in: in, out: bufio.NewReaderSize(outR, 64<<10), waiting: map[int64]chan []byte{}}
	b.Cleanup(func() {
		in.Close()
		_ = cmd.Wait()
		outR.Close()
	})
	return c
}

func (c *loopClient) request(id int64) []byte {
	buf := append(c.buf[:0], `{"jsonrpc":"2.0","id":`...)
	buf = strconv.AppendInt(buf, id, 10)
	buf = append(buf, `,"method":"tool/call","params":{"tool_call_id":"t","name":"echo","args":{"text":"hello"}}}`+"\n"...)
	c.buf = buf
	return buf
}

// initialize sends the handshake to an SDK server.
func (c *loopClient) initialize(b *testing.B) {
	if _, err := io.WriteString(c.in, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocol_version":"1.0"}}`+"\n"); err != nil {
		b.Fatal(err)
	}
	if line, err := c.out.ReadSlice('\n'); err != nil || !bytes.Contains(line, []byte(`"result"`)) {
		b.Fatalf("initialize: %s %v", line, err)
	}
}

// call is one sequential round trip: write a line, read a line.
func (c *loopClient) call(b *testing.B) []byte {
	if _, err := c.in.Write(c.request(c.next.Add(1))); err != nil {
		b.Fatal(err)
	}
	line, err := c.out.ReadSlice('\n')
	if err != nil {
		b.Fatal(err)
	}
	return line
}

// callMux is a round trip that may run concurrently with others. Once it
// has been used, call must not be.
func (c *loopClient) callMux(b *testing.B) {
	c.muxOnce.Do(func() { go c.demux() })
	id := c.next.Add(1)
	ch := make(chan []byte, 1)
	c.mu.Lock()
	c.waiting[id] = ch
	c.mu.Unlock()
	c.wmu.Lock()
	_, err := c.in.Write(c.request(id))
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
			ch <- nil
		}
	}
}

// pct returns the p-th percentile of d.
func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}
