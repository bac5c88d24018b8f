package host

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"yolop.dev/core"
)

// execTransport is a minimal subprocess transport for core's own tests
// (core cannot import transport/stdio, which depends on it).
type execTransport struct{}

type execInstance struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.Reader
	done   chan struct{}
	err    error
	mu     sync.Mutex
	tail   []string
	name   string
}

func (execTransport) Start(ctx context.Context, spec core.ServerSpec) (core.Instance, error) {
	cmd := exec.Command(spec.Command, spec.Args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range spec.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Dir = spec.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	errp, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	i := &execInstance{cmd: cmd, stdin: in, stdout: out, done: make(chan struct{}), name: spec.Name}
	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		sc := bufio.NewScanner(errp)
		for sc.Scan() {
			i.mu.Lock()
			i.tail = append(i.tail, sc.Text())
			if len(i.tail) > 20 {
				i.tail = i.tail[1:]
			}
			i.mu.Unlock()
		}
	}()
	go func() {
		<-stderrDone
		err := cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			xe := &core.ExitError{Name: i.name, Code: ee.ExitCode(), Stderr: i.StderrTail()}
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				xe.Code, xe.Signal = -1, ws.Signal().String()
			}
			i.err = xe
		}
		close(i.done)
	}()
	return i, nil
}

func (i *execInstance) Stdout() io.Reader     { return i.stdout }
func (i *execInstance) Stdin() io.WriteCloser { return i.stdin }
func (i *execInstance) Done() <-chan struct{} { return i.done }
func (i *execInstance) Err() error            { <-i.done; return i.err }
func (i *execInstance) PID() int              { return i.cmd.Process.Pid }
func (i *execInstance) StderrTail() []string {
	i.mu.Lock()
	defer i.mu.Unlock()
	return append([]string(nil), i.tail...)
}
func (i *execInstance) Kill() error {
	_ = syscall.Kill(-i.cmd.Process.Pid, syscall.SIGKILL)
	<-i.done
	return nil
}
func (i *execInstance) Stop(grace time.Duration) error {
	i.stdin.Close()
	select {
	case <-i.done:
	case <-time.After(grace):
		i.Kill()
	}
	return i.err
}
