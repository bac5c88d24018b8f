package confine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"yolop.dev/core"
)

// A probePlan lists the operations the launcher tries under the rules.
type probePlan struct {
	Ops []probeOp `json:"ops"`
}

// A probeOp is one attempted operation.
type probeOp struct {
	Kind   string `json:"kind"` // "read", "write", "connect", "bind", "exec"
	Target string `json:"target"`
}

// A ProbeResult is the outcome of one probe run inside the sandbox.
type ProbeResult struct {
	// Name says what was tried, e.g. "read outside the grant".
	Name string
	// Kind is "read", "write", "connect", "bind" or "exec"; Target the
	// path, port or program.
	Kind   string
	Target string
	// WantBlocked is what the rules say: true for a forbidden operation.
	WantBlocked bool
	// Blocked is what happened: the sandbox refused the operation.
	Blocked bool
	// Err is the error the operation got, if any ("" when it worked).
	Err string
}

// OK reports whether the sandbox did what the rules say.
func (r ProbeResult) OK() bool { return r.Blocked == r.WantBlocked }

// String is one line for doctor: "ok   read outside the grant (/tmp/x): blocked".
func (r ProbeResult) String() string {
	verdict := "FAIL"
	if r.OK() {
		verdict = "ok"
	}
	got := "allowed"
	if r.Blocked {
		got = "blocked"
	}
	want := "allowed"
	if r.WantBlocked {
		want = "blocked"
	}
	s := fmt.Sprintf("%-4s %s (%s): %s, want %s", verdict, r.Name, r.Target, got, want)
	if r.Err != "" && r.Blocked != r.WantBlocked {
		s += ": " + r.Err
	}
	return s
}

// ProbeOptions configure [Probe].
type ProbeOptions struct {
	// Launcher is the binary that calls [Init]; empty means
	// [LauncherPath]'s choice.
	Launcher string
	// Env is the probe process's environment (its PATH finds exec
	// probes); nil means PATH=/usr/bin:/bin.
	Env []string
}

// Probe runs the launcher in probe mode under c (as a server's baseline
// plus c) and reports, per probe, whether the sandbox blocked it: a read
// and a write outside the grant, a TCP connect to a loopback port c does
// not declare (the prober listens on it) and a bind of one, an exec of
// /bin/sh (forbidden unless c.Exec), and each declared path (read, and
// write where rw), connect port and bind port. On a machine that enforces nothing
// every forbidden probe comes back not blocked, which is the honest
// answer.
func Probe(ctx context.Context, c *core.Confinement, opts ProbeOptions) ([]ProbeResult, error) {
	if c == nil {
		return nil, errors.New("confine: no sandbox to probe")
	}
	env := opts.Env
	if env == nil {
		env = []string{"PATH=/usr/bin:/bin"}
	}
	outside, err := os.MkdirTemp("", "yolop-probe-outside-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(outside)
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("secret\n"), 0o600); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "yolop-probe-tmp-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	var results []ProbeResult
	var ops []probeOp
	try := func(name, kind, target string, wantBlocked bool) {
		results = append(results, ProbeResult{Name: name, Kind: kind, Target: target, WantBlocked: wantBlocked})
		ops = append(ops, probeOp{Kind: kind, Target: target})
	}
	if !covered(c, outside, false) {
		try("read outside the grant", "read", secret, true)
	}
	if !covered(c, outside, true) {
		try("write outside the grant", "write", filepath.Join(outside, "written"), true)
	}
	try("write the private temp directory", "write", filepath.Join(tmp, "written"), false)

	// An undeclared loopback port the prober listens on, so that only the
	// sandbox can make the connect fail.
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range 5 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("confine: listen for the connect probe: %w", err)
		}
		port := uint16(l.Addr().(*net.TCPAddr).Port)
		if slices.Contains(c.Connect, port) {
			l.Close()
			continue
		}
		listeners = append(listeners, l)
		go acceptAll(l)
		try("connect to an undeclared port", "connect", strconv.Itoa(int(port)), true)
		break
	}
	if port, err := freePort(c.Bind); err == nil {
		try("bind an undeclared port", "bind", strconv.Itoa(int(port)), true)
	}
	try("run a program", "exec", "/bin/sh", !c.Exec)

	for _, p := range c.Paths {
		if _, err := os.Stat(p.Path); err != nil {
			continue
		}
		try("read a declared path", "read", p.Path, false)
		if p.Write {
			try("write a declared path", "write", writeTarget(p.Path), false)
		}
	}
	for _, port := range c.Connect {
		if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port)))); err == nil {
			listeners = append(listeners, l)
			go acceptAll(l)
		}
		try("connect to a declared port", "connect", strconv.Itoa(int(port)), false)
	}

	for _, port := range c.Bind {
		try("bind a declared port", "bind", strconv.Itoa(int(port)), false)
	}

	self, err := LauncherPath(opts.Launcher)
	if err != nil {
		return nil, err
	}
	p := buildPlan(c, self, []string{self}, envValue(env, "PATH"), tmp)
	p.Probe = &probePlan{Ops: ops}
	cmd, err := Launch{Launcher: self, Env: env}.command(p)
	if err != nil {
		return nil, err
	}
	var stdout, stderr bytes.Buffer
	proc := exec.CommandContext(ctx, cmd.Path)
	proc.Args, proc.Env, proc.ExtraFiles = cmd.Args, cmd.Env, cmd.ExtraFiles
	proc.Stdout, proc.Stderr = &stdout, &stderr
	if err := proc.Start(); err != nil {
		cmd.Close()
		return nil, fmt.Errorf("confine: start the probe: %w", err)
	}
	serr := cmd.Started()
	werr := proc.Wait()
	if serr != nil {
		return nil, fmt.Errorf("confine: probe: %w", serr)
	}
	if werr != nil {
		return nil, fmt.Errorf("confine: probe: %v: %s", werr, strings.TrimSpace(stderr.String()))
	}
	var outs []probeOutcome
	if err := json.Unmarshal(stdout.Bytes(), &outs); err != nil || len(outs) != len(results) {
		return nil, fmt.Errorf("confine: probe answered %q: %v", stdout.String(), err)
	}
	for i, o := range outs {
		results[i].Blocked, results[i].Err = o.Blocked, o.Err
	}
	return results, nil
}

// covered reports whether a declared path grants dir (for writing, when
// write is set).
func covered(c *core.Confinement, dir string, write bool) bool {
	for _, p := range c.Paths {
		if write && !p.Write {
			continue
		}
		root := filepath.Clean(p.Path)
		if dir == root || strings.HasPrefix(dir, root+"/") || root == "/" {
			return true
		}
	}
	return false
}

// writeTarget is the path a write probe creates for a declared path: a new
// file inside a directory, the file itself otherwise (opened for append,
// nothing written).
func writeTarget(path string) string {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return filepath.Join(path, ".yolop-probe-"+strconv.Itoa(os.Getpid()))
	}
	return path
}

func acceptAll(l net.Listener) {
	for {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		conn.Close()
	}
}

// freePort returns a loopback port nothing listened on a moment ago,
// outside declared.
func freePort(declared []uint16) (uint16, error) {
	for range 5 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := uint16(l.Addr().(*net.TCPAddr).Port)
		l.Close()
		if !slices.Contains(declared, port) {
			return port, nil
		}
	}
	return 0, errors.New("no free port")
}

// A probeOutcome is what the launcher reports for one op.
type probeOutcome struct {
	Blocked bool   `json:"blocked"`
	Err     string `json:"err,omitempty"`
}

// runProbes runs the plan's ops in this (sandboxed) process and writes
// their outcomes as JSON to w.
func runProbes(p plan, w io.Writer) {
	outs := make([]probeOutcome, 0, len(p.Probe.Ops))
	for _, op := range p.Probe.Ops {
		err := runOp(op)
		o := probeOutcome{Blocked: denied(err)}
		if err != nil {
			o.Err = err.Error()
		}
		outs = append(outs, o)
	}
	_ = json.NewEncoder(w).Encode(outs)
}

func runOp(op probeOp) error {
	switch op.Kind {
	case "read":
		st, err := os.Stat(op.Target)
		if err != nil {
			return err
		}
		if st.IsDir() {
			_, err = os.ReadDir(op.Target)
			return err
		}
		f, err := os.Open(op.Target)
		if err != nil {
			return err
		}
		_, err = f.Read(make([]byte, 1))
		f.Close()
		if errors.Is(err, io.EOF) {
			err = nil
		}
		return err
	case "write":
		if st, err := os.Stat(op.Target); err == nil && !st.IsDir() {
			f, err := os.OpenFile(op.Target, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return err
			}
			return f.Close()
		}
		f, err := os.OpenFile(op.Target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		f.Close()
		return os.Remove(op.Target)
	case "connect":
		conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", op.Target), 5*time.Second)
		if err != nil {
			return err
		}
		return conn.Close()
	case "bind":
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", op.Target))
		if err != nil {
			return err
		}
		return l.Close()
	case "exec":
		return exec.Command(op.Target, "-c", "exit 0").Run()
	}
	return fmt.Errorf("unknown probe %q", op.Kind)
}

// denied reports whether err is the sandbox's refusal.
func denied(err error) bool {
	return errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM)
}
