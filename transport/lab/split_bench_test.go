package lab

import (
	"context"
	"fmt"
	"os"
	"testing"

	"yolop.dev/core/host"
	"yolop.dev/harness"
)

// BenchmarkSessionOverheadSplit splits the session side's overhead over
// the bare connection by part, each a harness session over the same echo
// server, alternating as the lab's sides do: minimal (the echo tool
// alone), +secret (a secret in the scrubber), +trace (a trace consumer
// beside it), +hook (the extension's pre_tool_use hook), and full (all
// three: the session side). b.N is the number of hot calls per side and
// caller count; idle makes a tenth as many.
//
//	go test -run '^$' -bench SessionOverheadSplit -benchtime 2000x ./transport/lab
func BenchmarkSessionOverheadSplit(b *testing.B) {
	ctx := context.Background()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	o := Options{Exe: exe}.withDefaults()
	k, done, err := o.newSessionKit()
	defer done()
	if err != nil {
		b.Fatal(err)
	}
	session := func(name string, secret bool, grants ...host.Grant) side {
		return side{name: name, start: func(ctx context.Context) (client, error) {
			h, err := k.open(ctx, secret)
			if err != nil {
				return nil, err
			}
			s, _ := h.NewSession(ctx, harness.SessionOptions{Extra: grants, NoEnabled: true, WorkspaceRoot: k.dir, SessionID: "lab"})
			if errs, failed := s.StartInPlace(ctx, grants); failed != 0 {
				s.Close()
				return nil, fmt.Errorf("starting %s: %v", name, errs)
			}
			return &sessionClient{s: s}, nil
		}}
	}
	sides := []side{
		{name: "bare", start: func(ctx context.Context) (client, error) { return startBare(ctx, o.Exe, o.ServeArgs(ServeStdio)) }},
		session("minimal", false, k.plain),
		session("secret", true, k.plain),
		session("trace", false, k.plain, k.trace),
		session("hook", false, k.echo),
		session("full", true, k.echo, k.trace),
	}
	clients := make([]client, len(sides))
	defer func() {
		for _, c := range clients {
			if c != nil {
				c.close()
			}
		}
	}()
	for i, s := range sides {
		if clients[i], err = s.start(ctx); err != nil {
			b.Fatal(err)
		}
	}
	p := newPayload(1 << 10)
	b.ResetTimer()
	idle, err := measureIdle(ctx, sides, clients, p, max(b.N/10, 1), o.IdleGap)
	if err != nil {
		b.Fatal(err)
	}
	rows := idle
	for _, conc := range []int{1, 8} {
		hot, err := measureHot(ctx, sides, clients, p, max(b.N, 2*conc), conc, o.Rounds)
		if err != nil {
			b.Fatal(err)
		}
		rows = append(rows, hot...)
	}
	b.StopTimer()
	for _, r := range rows {
		mode := r.Mode
		if r.Mode == "hot" {
			mode = fmt.Sprintf("hot%d", r.Concurrency)
		}
		b.ReportMetric(r.P50US, fmt.Sprintf("%s-%s-p50-µs", r.Side, mode))
		if r.Mode == "hot" && r.Concurrency > 1 {
			b.ReportMetric(r.CallsPerSec, fmt.Sprintf("%s-%s-calls/s", r.Side, mode))
		}
	}
}
