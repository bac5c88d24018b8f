package coding

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
	"unicode/utf8"

	"yolop.dev/core/yep"
)

const (
	// streamCap bounds what one command streams as tool/update; the
	// result's own cap is Options.OutputCap.
	streamCap = 1 << 20
	// flushLen is the longest partial line held back from streaming.
	flushLen = 4096
)

func (c *Coding) bash(ctx context.Context, ws workspace, args json.RawMessage, update func(string)) (yep.ToolResult, error) {
	var a struct {
		Command   string `json:"command"`
		TimeoutMS int    `json:"timeout_ms"`
	}
	if err := decode("bash", args, &a); err != nil {
		return failed(err), nil
	}
	if strings.TrimSpace(a.Command) == "" {
		return failed(errors.New(`bash needs {"command": "<command line>"}`)), nil
	}
	timeout := c.o.BashTimeout
	if a.TimeoutMS > 0 {
		timeout = min(time.Duration(a.TimeoutMS)*time.Millisecond, c.o.MaxBashTimeout)
	}

	pr, pw, err := os.Pipe()
	if err != nil {
		return failed(fmt.Errorf("bash: %w", err)), nil
	}
	defer pr.Close()
	cmd := exec.Command("bash", "-c", a.Command)
	cmd.Dir = ws.root
	env := c.o.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(env[:len(env):len(env)], "PWD="+ws.root)
	cmd.Stdout, cmd.Stderr = pw, pw // one pipe: the order the command wrote in
	newProcessGroup(cmd)
	err = cmd.Start()
	pw.Close() // the command holds its copies
	if err != nil {
		return failed(fmt.Errorf("bash: cannot start bash in %s: %w", ws.root, err)), nil
	}

	out := &capBuffer{limit: c.o.OutputCap}
	read := make(chan struct{})
	go func() {
		defer close(read)
		stream(pr, out, update)
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var timedOut bool
	select {
	case err = <-exited:
	case <-timer.C:
		timedOut = true
		err = c.stop(cmd.Process, exited)
	case <-ctx.Done():
		err = c.stop(cmd.Process, exited)
	}
	// bash is gone; whatever it left running in its group goes too, so
	// nothing outlives the call and the pipe reaches end of file. (The
	// group id is bash's pid, reaped by now; it names a live group while
	// any member is left, and an empty group is an ESRCH ignored.)
	signalGroup(cmd.Process, true)
	select {
	case <-read:
	case <-time.After(c.o.KillGrace):
		// A process that left the group (setsid) still holds the pipe.
		pr.Close()
		<-read
	}
	if ctx.Err() != nil && !timedOut {
		return yep.ToolResult{}, fmt.Errorf("bash: %w", ctx.Err())
	}

	text, truncated := out.result()
	code := cmd.ProcessState.ExitCode()
	d := map[string]any{"exit_code": code, "timed_out": timedOut, "output_bytes": out.total, "truncated": truncated}
	res := yep.ToolResult{Output: text, Data: nil}
	var exitErr *exec.ExitError
	switch {
	case timedOut:
		res.IsError = true
		res.Output = withNote(text, fmt.Sprintf("[timed out after %s: the command and every process it started were killed]", timeout))
	case err != nil && !errors.As(err, &exitErr):
		res.IsError = true
		res.Output = withNote(text, fmt.Sprintf("[bash failed: %v]", err))
	case code != 0:
		res.IsError = true
		if code < 0 {
			res.Output = withNote(text, fmt.Sprintf("[%s]", cmd.ProcessState))
		} else {
			res.Output = withNote(text, fmt.Sprintf("[exit status %d]", code))
		}
	case text == "":
		res.Output = "[no output]"
	}
	res.Data = data(d)
	return res, nil
}

// stop ends a command that is still running: SIGTERM to its process group,
// then SIGKILL when it has not exited within the grace period. It returns
// the command's Wait error.
func (c *Coding) stop(p *os.Process, exited <-chan error) error {
	signalGroup(p, false)
	grace := time.NewTimer(c.o.KillGrace)
	defer grace.Stop()
	select {
	case err := <-exited:
		return err
	case <-grace.C:
	}
	signalGroup(p, true)
	return <-exited
}

// withNote appends a note on a line of its own.
func withNote(text, note string) string {
	if text == "" || strings.HasSuffix(text, "\n") {
		return text + note
	}
	return text + "\n" + note
}

// stream copies r into out and streams it to update line by line (a
// partial line once it is flushLen long, or at the end), up to streamCap
// bytes.
func stream(r io.Reader, out *capBuffer, update func(string)) {
	buf := make([]byte, 32<<10)
	var line []byte
	streamed := 0
	send := func(b []byte) {
		if len(b) == 0 {
			return
		}
		if streamed >= streamCap {
			return
		}
		streamed += len(b)
		update(string(b))
		if streamed >= streamCap {
			update(fmt.Sprintf("[streaming stopped after %d bytes; the result holds the head and tail of the output]\n", streamed))
		}
	}
	for {
		n, err := r.Read(buf)
		if n > 0 {
			out.Write(buf[:n])
			line = append(line, buf[:n]...)
			for {
				i := bytes.IndexByte(line, '\n')
				if i < 0 {
					break
				}
				send(line[:i+1])
				line = line[i+1:]
			}
			if len(line) >= flushLen {
				send(line)
				line = line[:0]
			}
			line = append([]byte(nil), line...) // do not pin buf-sized history
		}
		if err != nil {
			send(line)
			return
		}
	}
}

// A capBuffer keeps the head and the tail of what is written to it, up to
// limit bytes in all.
type capBuffer struct {
	limit      int
	head, tail []byte
	total      int64
}

// Write never fails.
func (b *capBuffer) Write(p []byte) {
	b.total += int64(len(p))
	half := b.limit / 2
	if room := half - len(b.head); room > 0 {
		n := min(room, len(p))
		b.head = append(b.head, p[:n]...)
		p = p[n:]
	}
	b.tail = append(b.tail, p...)
	if keep := b.limit - half; len(b.tail) > 2*keep {
		n := copy(b.tail, b.tail[len(b.tail)-keep:])
		b.tail = b.tail[:n]
	}
}

// result is the output, or its head and tail with a note of how much was
// left out between them, and whether anything was.
func (b *capBuffer) result() (string, bool) {
	if b.total <= int64(b.limit) {
		return string(b.head) + string(b.tail), false
	}
	tail := b.tail[max(len(b.tail)-(b.limit-len(b.head)), 0):]
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	head := b.head
	for i := 0; i < utf8.UTFMax-1 && len(head) > 0 && !utf8.Valid(head[max(len(head)-utf8.UTFMax, 0):]); i++ {
		head = head[:len(head)-1]
	}
	omitted := b.total - int64(len(head)) - int64(len(tail))
	return fmt.Sprintf("%s\n[... %d bytes of output left out ...]\n%s", head, omitted, tail), true
}
