package lab_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"yolop.dev/transport/lab"
)

// TestMain lets the test binary serve the lab's servers, as yolop does
// with `yolop serve-lab <mode>`.
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == "serve-lab" {
		if err := lab.Serve(context.Background(), os.Args[2], os.Stdin, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if side := os.Getenv(startSideEnv); side != "" {
		// Play a lab that started one server and was then killed: print
		// the server's pid, and wait for the kill.
		exe, err := os.Executable()
		if err == nil {
			var pid int
			if pid, err = lab.StartSide(context.Background(), exe, side); err == nil {
				fmt.Println(pid)
				select {}
			}
		}
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m)
}

// startSideEnv makes a re-executed test binary start the server of one
// side, print its pid and wait to be killed.
const startSideEnv = "YOLOP_LAB_START_SIDE"

func exe(t *testing.T) string {
	t.Helper()
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// processSides are the sides but WASM, whose compile under the race
// detector is slow: TestWASMSide runs it alone.
var processSides = []string{lab.Stdio, lab.GoPlugin, lab.GoPluginGRPC, lab.InMemory}

// TestRunEverySide runs a small lab over every side but WASM and checks
// the report's shape: every side measured in every measurement, the
// floor's ratios 1, and the table and JSON a reader and a script get.
func TestRunEverySide(t *testing.T) {
	var progress bytes.Buffer
	rep, err := lab.Run(context.Background(), lab.Options{
		Exe: exe(t), Transports: processSides, Calls: 20, IdleCalls: 2, IdleGap: time.Millisecond,
		Concurrency: []int{4, 1}, Sizes: []int{64, 8 << 10}, Spawns: 1, Rounds: 2,
		Progress: &progress,
	})
	if err != nil {
		t.Fatalf("Run: %v\nprogress:\n%s", err, progress.String())
	}
	for _, a := range rep.Sides {
		if !a.Available && (a.Name == lab.Floor || slices.Contains(processSides, a.Name)) {
			t.Errorf("%s not measured: %s", a.Name, a.Reason)
		}
	}
	sides := 1 + len(processSides)
	if len(rep.Spawn) != sides {
		t.Fatalf("spawn rows = %+v", rep.Spawn)
	}
	// idle × 2 sizes + hot × 2 concurrencies × 2 sizes, each for every side.
	if want := (2 + 4) * sides; len(rep.Calls) != want {
		t.Fatalf("%d call rows, want %d", len(rep.Calls), want)
	}
	for _, c := range rep.Calls {
		if c.P50US <= 0 || c.P99US < c.P50US || c.Calls == 0 {
			t.Errorf("row %+v: no latencies", c)
		}
		if c.Mode == "hot" && c.CallsPerSec <= 0 {
			t.Errorf("row %+v: no calls/s", c)
		}
		if c.Side == lab.Floor && (c.P50Ratio != 1 || (c.Mode == "hot" && c.RateRatio != 1)) {
			t.Errorf("floor row %+v: ratios are not 1", c)
		}
	}
	if rep.Calls[0].Mode != "idle" || rep.Calls[len(rep.Calls)-1].Concurrency != 4 {
		t.Errorf("measurements out of order: first %+v, last %+v", rep.Calls[0], rep.Calls[len(rep.Calls)-1])
	}

	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Transport lab:", "spawn → ready", "idle, 64B", "hot, 8KiB, 4 callers", "calls/s ÷floor", "go-plugin", "go-plugin-grpc", "in-memory", "wasm: not measured: not selected", "1.00×"} {
		if !strings.Contains(table.String(), w) {
			t.Errorf("table lacks %q:\n%s", w, table.String())
		}
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back lab.Report
	if err := json.Unmarshal(b, &back); err != nil || len(back.Calls) != len(rep.Calls) || back.Calls[0].Side != lab.Floor {
		t.Fatalf("JSON round trip: %v, %+v", err, back.Calls)
	}
}

// TestWASMSide runs the WASM side, its echo module built by the lab with
// the go command. Under the race detector wazero's compile of the module
// takes minutes; the side shares everything else with the others, and
// transport/wasm's own tests cover the transport under -race.
func TestWASMSide(t *testing.T) {
	if raceEnabled {
		t.Skip("wazero's compile under the race detector takes minutes; scripts/test runs this test again without -race")
	}
	rep, err := lab.Run(context.Background(), lab.Options{
		Exe: exe(t), Transports: []string{lab.WASM},
		Calls: 4, IdleCalls: 1, IdleGap: time.Millisecond, Concurrency: []int{2}, Sizes: []int{64}, Spawns: 1, Rounds: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range rep.Sides {
		if a.Name == lab.WASM && !a.Available {
			t.Fatalf("wasm not measured: %s", a.Reason)
		}
	}
	if len(rep.Spawn) != 2 || rep.Spawn[1].Side != lab.WASM || len(rep.Calls) != 4 || rep.Calls[3].Side != lab.WASM || rep.Calls[3].CallsPerSec <= 0 {
		t.Fatalf("spawn %+v, calls %+v", rep.Spawn, rep.Calls)
	}
}

// TestSelectedSides: unselected transports are reported as such, and a
// WASM module that does not exist makes WASM unavailable, not the run fail.
func TestSelectedSides(t *testing.T) {
	rep, err := lab.Run(context.Background(), lab.Options{
		Exe: exe(t), Transports: []string{lab.Stdio, lab.WASM}, WASMModule: "/nonexistent/echo.wasm",
		Calls: 10, IdleCalls: 1, IdleGap: time.Millisecond, Concurrency: []int{1}, Sizes: []int{16}, Spawns: 1, Rounds: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]lab.Availability{}
	for _, a := range rep.Sides {
		got[a.Name] = a
	}
	if !got[lab.Floor].Available || !got[lab.Stdio].Available || got[lab.GoPlugin].Reason != "not selected" || got[lab.WASM].Available || !strings.Contains(got[lab.WASM].Reason, "/nonexistent/echo.wasm") {
		t.Fatalf("sides = %+v", rep.Sides)
	}
	if len(rep.Spawn) != 2 || len(rep.Calls) != 4 {
		t.Fatalf("spawn %+v, calls %+v", rep.Spawn, rep.Calls)
	}
}

// TestBrokenServer: a side whose server does not answer fails the run,
// naming the side.
func TestBrokenServer(t *testing.T) {
	_, err := lab.Run(context.Background(), lab.Options{
		Exe: exe(t), ServeArgs: func(mode string) []string {
			if mode == lab.ServeStdio {
				return []string{"serve-lab", "no-such-mode"}
			}
			return []string{"serve-lab", mode}
		},
		Transports: []string{lab.Stdio}, Calls: 10, IdleCalls: 1, Concurrency: []int{1}, Sizes: []int{16}, Spawns: 1, Rounds: 1,
	})
	if err == nil || !strings.HasPrefix(err.Error(), "stdio: ") {
		t.Fatalf("err = %v; want the stdio side named", err)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int{"512": 512, "1KiB": 1024, "64k": 64 << 10, "1MiB": 1 << 20, "2mb": 2 << 20, "100B": 100} {
		if got, err := lab.ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1KiB", "1GiB", "65MiB", "lots"} {
		if _, err := lab.ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) succeeded", in)
		}
	}
	if s := lab.SizeString(1 << 20); s != "1MiB" {
		t.Errorf("SizeString = %q", s)
	}
}
