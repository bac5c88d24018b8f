package lab_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"yolop.dev/core/yep"
	"yolop.dev/transport/lab"
)

// TestSessionSideParts: the session side runs every part a product call
// passes through. The echo comes back; the extension's pre_tool_use hook
// blocks a call (so it fires); the argument check refuses arguments that
// break the input_schema before any round trip; the trace consumer got the
// calls' events, with the registered secret scrubbed from them; and the
// secret is scrubbed from the tool's output.
func TestSessionSideParts(t *testing.T) {
	f, err := lab.CheckSession(context.Background(), exe(t))
	if err != nil {
		t.Fatal(err)
	}
	if f.Echoed != "hello" {
		t.Errorf("echo answered %q, want hello", f.Echoed)
	}
	if f.Blocked == nil || !strings.Contains(f.Blocked.Error(), "forbidden") {
		t.Errorf("the call the hook blocks returned %v; want the hook's block", f.Blocked)
	}
	if f.BadArgs == nil || !strings.Contains(f.BadArgs.Error(), "text") {
		t.Errorf("a call with a number for text returned %v; want the argument check's refusal", f.BadArgs)
	}
	if strings.Contains(f.SecretOutput, f.Secret) || !strings.Contains(f.SecretOutput, "[redacted:lab-echo.token]") {
		t.Errorf("the output of a call carrying the secret is %q; want it scrubbed", f.SecretOutput)
	}
	tr := f.Trace
	// Four calls started; the blocked one and the refused one did not all
	// complete, but every started call's tool.started reached the consumer.
	if tr.Types[yep.TraceToolStarted] < 4 {
		t.Errorf("the trace consumer got %v; want a tool.started event for each of the calls", tr.Types)
	}
	var all bytes.Buffer
	for _, d := range tr.First {
		all.Write(d)
	}
	if strings.Contains(all.String(), f.Secret) {
		t.Errorf("the trace consumer got the secret: %s", all.String())
	}
	if !strings.Contains(all.String(), "[redacted:lab-echo.token]") || !strings.Contains(all.String(), "hello") {
		t.Errorf("the trace consumer's events lack the calls' (scrubbed) arguments: %s", all.String())
	}
}

// TestProductSides runs the product comparison for a handful of calls:
// the session, the minimal session, the bare connection and both peers
// answer every call, in every measurement; the session start with eager
// extensions is measured against as many bare children; and the table
// ends with the product comparison.
func TestProductSides(t *testing.T) {
	var progress bytes.Buffer
	// Two extensions a side for the ten-eager start, and no spawn→ready
	// (TestRunEverySide covers it): the same code, at a cost a CI run
	// under -race takes.
	rep, err := lab.Run(context.Background(), lab.Quick(lab.Options{
		Exe: exe(t), Transports: lab.ProductSplit, Calls: 8, IdleCalls: 2, IdleGap: time.Millisecond,
		Concurrency: []int{3}, Sizes: []int{64}, Spawns: 1, Rounds: 2, Progress: &progress,
	}, 2))
	if err != nil {
		t.Fatalf("Run: %v\nprogress:\n%s", err, progress.String())
	}
	for _, a := range rep.Sides {
		if !a.Available && (a.Name == lab.Floor || slices.Contains(lab.ProductSplit, a.Name)) {
			t.Errorf("%s not measured: %s", a.Name, a.Reason)
		}
	}
	sides := 1 + len(lab.ProductSplit)
	if len(rep.Spawn) != 0 || len(rep.Calls) != 2*sides {
		t.Fatalf("spawn %+v, calls %+v", rep.Spawn, rep.Calls)
	}
	seen := map[string]int{}
	for _, c := range rep.Calls {
		seen[c.Side]++
		if c.P50US <= 0 || c.Calls == 0 || (c.Mode == "hot" && c.CallsPerSec <= 0) {
			t.Errorf("row %+v: not measured", c)
		}
	}
	for _, s := range lab.ProductSplit {
		if seen[s] != 2 {
			t.Errorf("%s has %d rows, want 2", s, seen[s])
		}
	}
	st := rep.StartTen
	if st == nil || st.Samples != 1 || st.SessionMS <= 0 || st.BareMS <= 0 || st.Ratio <= 0 {
		t.Fatalf("start ten = %+v", st)
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"host overhead per call", "of it the call path", "ten eager", lab.MCPSDK, lab.GoPluginNetRPC} {
		if !strings.Contains(table.String(), w) {
			t.Errorf("table lacks %q:\n%s", w, table.String())
		}
	}
	t.Log(table.String())
}
