package conformance

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// The behaviours a transport under test must be able to start, by name.
// [Suite.Spec] maps each to the spec that starts it.
const (
	// Echo copies stdin to stdout, byte for byte, and exits 0 when stdin
	// ends.
	Echo = "echo"
	// Crash reads one line (the call it dies in the middle of), writes
	// [CrashLines] to stderr and exits with status [CrashCode].
	Crash = "crash"
	// Stderr writes [StderrLines] to stderr, then "ready\n" to stdout, then
	// behaves as Echo.
	Stderr = "stderr"
	// Ignore neither reads stdin nor writes stdout, and does not exit when
	// stdin ends: it runs until it is stopped or killed (in-process, until
	// its context is cancelled).
	Ignore = "ignore"
	// Exit writes "bye\n" to stdout and exits 0 at once, without reading
	// stdin.
	Exit = "exit"
	// Missing is no behaviour: its spec must make Start fail, with an error
	// that names the extension (a command that does not exist, say).
	Missing = "missing"
)

// CrashCode is the exit status of [Crash].
const CrashCode = 3

// CrashLines are the lines [Crash] writes to stderr before it exits.
var CrashLines = []string{"conformance: crashing", "conformance: last words"}

// StderrLines are the lines [Stderr] writes to stderr.
var StderrLines = []string{"conformance: stderr 1", "conformance: stderr 2", "conformance: stderr 3"}

// A Behaviour is one of the suite's server programs, written once for
// every transport: it reads the host's bytes from stdin, writes its own to
// stdout and its diagnostics to stderr, and returns its exit status. ctx
// is cancelled only where the transport has a way to say "stop" that a
// process lacks (an in-memory server being killed); a process passes
// [context.Background].
type Behaviour func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) int

// Behaviours returns every behaviour by name (all but [Missing]), for a
// transport's test server program to dispatch on.
func Behaviours() map[string]Behaviour {
	return map[string]Behaviour{
		Echo:   echo,
		Crash:  crash,
		Stderr: stderrThenEcho,
		Ignore: ignore,
		Exit:   exit,
	}
}

// Main runs the named behaviour over the process's standard streams and
// exits with its status; a server program for a process transport calls
// it from main (or TestMain). An unknown name exits 2, saying so on
// stderr.
func Main(name string) {
	b := Behaviours()[name]
	if b == nil {
		fmt.Fprintf(os.Stderr, "conformance: no behaviour %q\n", name)
		os.Exit(2)
	}
	os.Exit(b(context.Background(), os.Stdin, os.Stdout, os.Stderr))
}

func echo(_ context.Context, stdin io.Reader, stdout, _ io.Writer) int {
	if _, err := io.Copy(stdout, stdin); err != nil {
		return 1
	}
	return 0
}

func crash(_ context.Context, stdin io.Reader, _, stderr io.Writer) int {
	_, _ = bufio.NewReader(stdin).ReadString('\n')
	for _, l := range CrashLines {
		fmt.Fprintln(stderr, l)
	}
	return CrashCode
}

func stderrThenEcho(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) int {
	for _, l := range StderrLines {
		fmt.Fprintln(stderr, l)
	}
	if _, err := io.WriteString(stdout, "ready\n"); err != nil {
		return 1
	}
	return echo(ctx, stdin, stdout, stderr)
}

func ignore(ctx context.Context, _ io.Reader, _, _ io.Writer) int {
	// A ticker, not a bare receive: a process whose only goroutine waits
	// on context.Background() forever would be "deadlocked" to the Go
	// runtime and die of it.
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return 0
		case <-t.C:
		}
	}
}

func exit(_ context.Context, _ io.Reader, stdout, _ io.Writer) int {
	if _, err := io.WriteString(stdout, "bye\n"); err != nil {
		return 1
	}
	return 0
}
