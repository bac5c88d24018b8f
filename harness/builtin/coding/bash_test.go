package coding_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/harness/builtin/coding"
)

// bash runs command through the capability with its updates collected.
func (f *fixture) bash(ctx context.Context, t *testing.T, a map[string]any, onUpdate func(string)) (yep.ToolResult, []string, error) {
	t.Helper()
	var updates []string
	res, err := f.c.CallTool(ctx, host.ToolCall{ID: "call-7", Name: "bash", Args: json.RawMessage(args(t, a))}, func(u yep.ToolUpdateParams) {
		if u.ToolCallID != "call-7" {
			t.Errorf("update for %q, want call-7", u.ToolCallID)
		}
		updates = append(updates, u.Output)
		if onUpdate != nil {
			onUpdate(u.Output)
		}
	})
	return res, updates, err
}

// alive says whether pid is a live process: one that exists, is not a
// zombie and is not exiting. A process killed by a signal closes its files
// (so the command's pipe reaches end of file) after the kernel marks it
// exiting (PF_EXITING in the flags of /proc/<pid>/stat) and before it is a
// zombie, so "exiting" is what the call can promise on return; when the
// call gave up waiting for the pipe, a SIGKILL sent and not yet acted on is
// as final.
func alive(t *testing.T, pid int) bool {
	t.Helper()
	const pfExiting = 0x4
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if errors.Is(err, os.ErrNotExist) {
		return false
	} else if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // from field 3, state
	flags, err := strconv.ParseUint(fields[6], 10, 64)
	if err != nil {
		t.Fatalf("/proc/%d/stat: flags %q: %v", pid, fields[6], err)
	}
	return fields[0] != "Z" && fields[0] != "X" && flags&pfExiting == 0 && !killPending(t, pid)
}

// killPending reports whether pid has a SIGKILL pending: it will never run
// its own code again, only exit, even when a loaded machine has not yet
// scheduled it to do so.
func killPending(t *testing.T, pid int) bool {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if errors.Is(err, os.ErrNotExist) {
		return true
	} else if err != nil {
		t.Fatal(err)
	}
	const sigkill = 1 << (9 - 1)
	for _, l := range strings.Split(string(b), "\n") {
		name, mask, ok := strings.Cut(l, ":\t")
		if !ok || (name != "SigPnd" && name != "ShdPnd") {
			continue
		}
		bits, err := strconv.ParseUint(strings.TrimSpace(mask), 16, 64)
		if err != nil {
			t.Fatalf("/proc/%d/status: %s %q: %v", pid, name, mask, err)
		}
		if bits&sigkill != 0 {
			return true
		}
	}
	return false
}

// pidIn returns the number on the first line of text that is one.
func pidIn(t *testing.T, text string) int {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		if pid, err := strconv.Atoi(strings.TrimSpace(l)); err == nil {
			return pid
		}
	}
	t.Fatalf("no pid in %q", text)
	return 0
}

// TestBashStreams: output streams as tool/update lines in the order the
// command wrote them, stdout and stderr together, before the call returns;
// the result holds all of it and the exit status.
func TestBashStreams(t *testing.T) {
	f := newFixture(t, coding.Options{})
	res, updates, err := f.bash(context.Background(), t, map[string]any{"command": "for i in 1 2 3; do echo out$i; echo err$i >&2; done; printf tail"}, nil)
	if err != nil || res.IsError {
		t.Fatalf("bash = %+v, %v", res, err)
	}
	want := []string{"out1\n", "err1\n", "out2\n", "err2\n", "out3\n", "err3\n", "tail"}
	if d := cmp.Diff(want, updates); d != "" {
		t.Fatalf("updates (-want +got):\n%s", d)
	}
	if res.Output != strings.Join(want, "") {
		t.Fatalf("output = %q", res.Output)
	}
	if d := dataOf(t, res); d["exit_code"] != float64(0) || d["timed_out"] != false {
		t.Fatalf("data = %v", d)
	}
}

// TestBashWorkdir: commands run in the workspace root the session names
// at the time of the call.
func TestBashWorkdir(t *testing.T) {
	f := newFixture(t, coding.Options{})
	root := f.root
	f.c = coding.New(coding.Options{Root: func() string { return root }})
	res, _, err := f.bash(context.Background(), t, map[string]any{"command": "pwd; echo made > made.txt"}, nil)
	if err != nil || res.Output != f.root+"\n" {
		t.Fatalf("pwd = %+v, %v; want %s", res, err, f.root)
	}
	if got := readFile(t, f.path("made.txt")); got != "made\n" {
		t.Fatalf("made.txt = %q", got)
	}
	root = f.outside // the session switched workspace
	if res, _, err := f.bash(context.Background(), t, map[string]any{"command": "pwd"}, nil); err != nil || res.Output != f.outside+"\n" {
		t.Fatalf("pwd after the switch = %+v, %v", res, err)
	}
	if res := f.ok(t, "read_file", `{"path":"secret.txt"}`); res.Output != "top secret\n" {
		t.Fatalf("read after the switch = %q", res.Output)
	}
}

// TestBashExitStatus: a non-zero exit is an is_error result with the
// output and the status.
func TestBashExitStatus(t *testing.T) {
	f := newFixture(t, coding.Options{})
	res, _, err := f.bash(context.Background(), t, map[string]any{"command": "echo oops >&2; exit 3"}, nil)
	if err != nil || !res.IsError || res.Output != "oops\n[exit status 3]" {
		t.Fatalf("exit 3 = %+v, %v", res, err)
	}
	if d := dataOf(t, res); d["exit_code"] != float64(3) {
		t.Fatalf("data = %v", d)
	}
	res, _, err = f.bash(context.Background(), t, map[string]any{"command": "kill -KILL $$"}, nil)
	if err != nil || !res.IsError || !strings.Contains(res.Output, "signal: killed") {
		t.Fatalf("killed = %+v, %v", res, err)
	}
	if res, _, _ := f.bash(context.Background(), t, map[string]any{"command": "true"}, nil); res.IsError || res.Output != "[no output]" {
		t.Fatalf("true = %+v", res)
	}
}

// TestBashTimeoutKillsGroup: on timeout the command and a process it left
// in the background are killed, and the result says so with the output
// so far.
func TestBashTimeoutKillsGroup(t *testing.T) {
	f := newFixture(t, coding.Options{})
	// The timeout must leave bash time to start the sleep and print its
	// pid: a machine too loaded to do that within it gets a longer one.
	for timeout := time.Second; ; timeout *= 2 {
		res, _, err := f.bash(context.Background(), t, map[string]any{"command": "sleep 1000 & echo $!; wait", "timeout_ms": timeout.Milliseconds()}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || !strings.Contains(res.Output, "[timed out after "+timeout.String()+": the command and every process it started were killed]") {
			t.Fatalf("timeout = %+v", res)
		}
		if d := dataOf(t, res); d["timed_out"] != true {
			t.Fatalf("data = %v", d)
		}
		if !hasPid(res.Output) && timeout < 16*time.Second {
			continue
		}
		if pid := pidIn(t, res.Output); alive(t, pid) {
			t.Fatalf("the background sleep %d outlived the timeout", pid)
		}
		return
	}
}

// hasPid reports whether text has a line that is a number.
func hasPid(text string) bool {
	for _, l := range strings.Split(text, "\n") {
		if _, err := strconv.Atoi(strings.TrimSpace(l)); err == nil {
			return true
		}
	}
	return false
}

// TestBashBackgroundDoesNotOutlive: a command that returns while a process
// it started still runs ends the call; that process is killed with its
// group.
func TestBashBackgroundDoesNotOutlive(t *testing.T) {
	f := newFixture(t, coding.Options{})
	res, _, err := f.bash(context.Background(), t, map[string]any{"command": "sleep 1000 & echo $!"}, nil)
	if err != nil || res.IsError {
		t.Fatalf("bash = %+v, %v", res, err)
	}
	if pid := pidIn(t, res.Output); alive(t, pid) {
		t.Fatalf("the background sleep %d outlived the command", pid)
	}
}

// TestBashCancelKillsGroup: cancelling the call's context kills the
// command's whole process group and the call returns the cancellation.
func TestBashCancelKillsGroup(t *testing.T) {
	f := newFixture(t, coding.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var pid int
	_, updates, err := f.bash(ctx, t, map[string]any{"command": "sleep 1000 & echo $!; wait"}, func(line string) {
		pid, _ = strconv.Atoi(strings.TrimSpace(line))
		cancel()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled bash returned %v, want context.Canceled", err)
	}
	if pid == 0 || len(updates) != 1 {
		t.Fatalf("updates = %q", updates)
	}
	if alive(t, pid) {
		t.Fatalf("the sleep %d outlived the cancellation", pid)
	}
}

// TestBashOutputCap: a result holds the head and the tail of a long
// output, with how much was left out between them.
func TestBashOutputCap(t *testing.T) {
	f := newFixture(t, coding.Options{OutputCap: 1000})
	var full strings.Builder
	for i := 1; i <= 10000; i++ {
		fmt.Fprintf(&full, "%d\n", i)
	}
	res, updates, err := f.bash(context.Background(), t, map[string]any{"command": "seq 1 10000"}, nil)
	if err != nil || res.IsError {
		t.Fatalf("seq = %+v, %v", res.IsError, err)
	}
	if strings.Join(updates, "") != full.String() {
		t.Fatalf("the streamed output is not seq's (%d bytes, want %d)", len(strings.Join(updates, "")), full.Len())
	}
	s := full.String()
	want := s[:500] + fmt.Sprintf("\n[... %d bytes of output left out ...]\n", len(s)-1000) + s[len(s)-500:]
	if res.Output != want {
		t.Fatalf("capped output:\n%s\nwant:\n%s", res.Output, want)
	}
	if d := dataOf(t, res); d["truncated"] != true || d["output_bytes"] != float64(len(s)) {
		t.Fatalf("data = %v", d)
	}
}

// TestBashTimeoutArgument: a timeout above the maximum is held to it; a
// bad command is refused before anything runs.
func TestBashTimeoutArgument(t *testing.T) {
	f := newFixture(t, coding.Options{MaxBashTimeout: 1000_000_000})
	res, _, err := f.bash(context.Background(), t, map[string]any{"command": "sleep 1000", "timeout_ms": 3_600_000}, nil)
	if err != nil || !strings.Contains(res.Output, "timed out after 1s") {
		t.Fatalf("over the maximum = %+v, %v", res, err)
	}
	f.fails(t, "bash", `{"command":"  "}`, "command")
}

// TestScrub: what a tool returns or streams passes through Options.Scrub.
func TestScrub(t *testing.T) {
	f := newFixture(t, coding.Options{})
	f.c = coding.New(coding.Options{
		Root:  func() string { return f.root },
		Scrub: func(s string) string { return strings.ReplaceAll(s, "hunter2", "[redacted]") },
	})
	writeFile(t, f.path("env"), "PASSWORD=hunter2\n")
	if res := f.ok(t, "read_file", `{"path":"env"}`); res.Output != "PASSWORD=[redacted]\n" {
		t.Fatalf("read_file = %q", res.Output)
	}
	res, updates, err := f.bash(context.Background(), t, map[string]any{"command": "cat env"}, nil)
	if err != nil || res.Output != "PASSWORD=[redacted]\n" || strings.Join(updates, "") != "PASSWORD=[redacted]\n" {
		t.Fatalf("bash = %+v, %v, updates %q", res, err, updates)
	}
}

// TestBashKillEscalates: a command that ignores SIGTERM is killed with
// SIGKILL once the grace period is over.
func TestBashKillEscalates(t *testing.T) {
	f := newFixture(t, coding.Options{})
	f.c = coding.New(coding.Options{Root: func() string { return f.root }, KillGrace: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var pid int
	_, _, err := f.bash(ctx, t, map[string]any{"command": "trap '' TERM; sleep 1000 & echo $!; wait"}, func(line string) {
		pid, _ = strconv.Atoi(strings.TrimSpace(line))
		cancel()
	})
	if !errors.Is(err, context.Canceled) || pid == 0 {
		t.Fatalf("cancelled bash returned %v, pid %d", err, pid)
	}
	if alive(t, pid) {
		t.Fatalf("the sleep %d ignoring SIGTERM outlived the cancellation", pid)
	}
}
