package lab

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"yolop.dev/core"
	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/yep"
)

// A client makes echo calls to one running server: call sends p and
// checks the answer, from one of callers concurrent callers; close ends
// the server and waits for it.
type client interface {
	call(ctx context.Context, p *payload, callers int) error
	close() error
}

// A payload is the text an echo call sends, prepared once: the tool's
// arguments as a host holds them (raw JSON).
type payload struct {
	text string
	args json.RawMessage
}

func newPayload(size int) *payload {
	text := make([]byte, size)
	for i := range text {
		text[i] = 'a' + byte(i%26)
	}
	args, _ := json.Marshal(map[string]string{"text": string(text)})
	return &payload{text: string(text), args: args}
}

// A side is one way of running the echo server: the floor or a transport.
type side struct {
	name  string
	start func(ctx context.Context) (client, error) // returns once the server answered once
}

// --- the floor: a process over OS pipes, a hand-written client ---------

// floorClient writes a prebuilt request line and reads a line. With one
// caller it does both on the caller's goroutine (no hand-off at all); with
// more it demultiplexes responses by id over its one pipe.
type floorClient struct {
	cmd     *exec.Cmd
	release func() // of startChild, once the process has ended
	in      io.WriteCloser
	out     *bufio.Reader
	next    atomic.Int64

	wmu  sync.Mutex
	buf  []byte
	long []byte

	muxOnce sync.Once
	muxing  atomic.Bool
	mu      sync.Mutex
	waiting map[int64]chan error
	ended   error
}

func startFloor(ctx context.Context, exe string, args []string) (*floorClient, error) {
	cmd, in, out, release, err := startPiped(exe, args, nil, "the floor server")
	if err != nil {
		return nil, err
	}
	c := &floorClient{cmd: cmd, release: release, in: in, out: bufio.NewReaderSize(out, 64<<10), waiting: map[int64]chan error{}}
	if err := c.call(ctx, newPayload(5), 1); err != nil {
		c.close()
		return nil, fmt.Errorf("the floor server did not answer: %w", err)
	}
	return c, nil
}

func (c *floorClient) request(buf []byte, id int64, text string) []byte {
	buf = append(buf[:0], `{"jsonrpc":"2.0","id":`...)
	buf = strconv.AppendInt(buf, id, 10)
	buf = append(buf, `,"method":"tool/call","params":{"tool_call_id":"t","name":"echo","args":{"text":"`...)
	buf = append(buf, text...)
	return append(buf, "\"}}}\n"...)
}

// readLine reads one response line of any length.
func (c *floorClient) readLine() ([]byte, error) {
	line, err := c.out.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	c.long = append(c.long[:0], line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		line, err = c.out.ReadSlice('\n')
		c.long = append(c.long, line...)
	}
	return c.long, err
}

// call makes one call. A single caller writes and reads on its own
// goroutine; once several have called, a demultiplexer owns the reader and
// every later call goes through it.
func (c *floorClient) call(_ context.Context, p *payload, callers int) error {
	text := p.text
	if callers > 1 || c.muxing.Load() {
		c.muxing.Store(true)
		return c.callMux(text)
	}
	c.wmu.Lock()
	c.buf = c.request(c.buf, c.next.Add(1), text)
	_, err := c.in.Write(c.buf)
	c.wmu.Unlock()
	if err != nil {
		return err
	}
	line, err := c.readLine()
	if err != nil {
		return fmt.Errorf("reading the floor's answer: %w", err)
	}
	return checkFloor(line, text)
}

func checkFloor(line []byte, text string) error {
	if len(line) < len(text) || !bytes.Contains(line, []byte(`"output":"`)) {
		return fmt.Errorf("the floor answered %.80q", line)
	}
	return nil
}

// callMux is a call among several concurrent ones.
func (c *floorClient) callMux(text string) error {
	c.muxOnce.Do(func() { go c.demux() })
	id := c.next.Add(1)
	ch := make(chan error, 1)
	c.mu.Lock()
	if c.ended != nil {
		c.mu.Unlock()
		return c.ended
	}
	c.waiting[id] = ch
	c.mu.Unlock()
	c.wmu.Lock()
	c.buf = c.request(c.buf, id, text)
	_, err := c.in.Write(c.buf)
	c.wmu.Unlock()
	if err != nil {
		return err
	}
	return <-ch
}

func (c *floorClient) demux() {
	for {
		line, err := c.readLine()
		if err != nil {
			c.mu.Lock()
			c.ended = fmt.Errorf("the floor server's output ended: %w", err)
			for id, ch := range c.waiting {
				ch <- c.ended
				delete(c.waiting, id)
			}
			c.mu.Unlock()
			return
		}
		var resp struct {
			ID     int64 `json:"id"`
			Result struct {
				Output string `json:"output"`
			} `json:"result"`
		}
		if err := json.Unmarshal(line, &resp); err != nil {
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

func (c *floorClient) close() error {
	defer c.release()
	c.in.Close()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		c.cmd.Process.Kill()
		return <-done
	}
}

// --- a transport: core/jsonrpc over its Instance --------------------------

// stackClient is the full stack: a core/jsonrpc client over the instance a
// transport started, against the SDK's echo server.
type stackClient struct {
	inst core.Instance
	conn *jsonrpc.Conn
}

func startStack(ctx context.Context, t core.Transport, spec core.ServerSpec) (*stackClient, error) {
	inst, err := t.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	conn := jsonrpc.NewConn(inst.Stdout(), inst.Stdin(), jsonrpc.Options{Closer: inst.Stdin()})
	c := &stackClient{inst: inst, conn: conn}
	err = conn.Call(ctx, yep.MethodInitialize, yep.InitializeParams{ProtocolVersion: yep.ProtocolVersion, Capabilities: yep.Capabilities{yep.CapCancel}}, nil)
	if err != nil {
		c.close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	return c, nil
}

func (c *stackClient) call(ctx context.Context, p *payload, _ int) error {
	var res yep.ToolResult
	if err := c.conn.Call(ctx, yep.MethodToolCall, yep.ToolCallParams{ToolCallID: "t", Name: "echo", Args: p.args}, &res); err != nil {
		return err
	}
	if len(res.Output) != len(p.text) {
		return fmt.Errorf("echo answered %d bytes, want %d", len(res.Output), len(p.text))
	}
	return nil
}

func (c *stackClient) close() error {
	c.conn.Close()
	c.conn.Wait()
	return c.inst.Stop(5 * time.Second)
}

// startPiped starts exe as a child of the lab with pipes to its stdin and
// from its stdout; env, if set, is added to the lab's environment. what
// names the server in an error.
func startPiped(exe string, args, env []string, what string) (cmd *exec.Cmd, in io.WriteCloser, out io.ReadCloser, release func(), err error) {
	cmd = exec.Command(exe, args...)
	cmd.SysProcAttr = childAttr()
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	if in, err = cmd.StdinPipe(); err != nil {
		return nil, nil, nil, nil, err
	}
	if out, err = cmd.StdoutPipe(); err != nil {
		return nil, nil, nil, nil, err
	}
	if release, err = startChild(cmd.Start); err != nil {
		release()
		return nil, nil, nil, nil, fmt.Errorf("starting %s %s: %w", what, exe, err)
	}
	return cmd, in, out, release, nil
}
