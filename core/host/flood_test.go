package host

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"yolop.dev/core/jsonrpc"
)

// floodArgs are the arguments of server.py's notify_flood tool: n
// notifications of method with params.
func floodArgs(n int, method string, params any) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"n": n, "method": method, "params": params})
	return b
}

// suppressedTotal sums the N of every summary line matching re, whose
// first group is N.
func suppressedTotal(t *testing.T, logs string, re *regexp.Regexp) int {
	t.Helper()
	total := 0
	for _, m := range re.FindAllStringSubmatch(logs, -1) {
		n, err := strconv.Atoi(m[1])
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	return total
}

// maxLogged is how many lines the warning bucket lets through in elapsed:
// the burst, then one per interval. It is computed from the time the
// flood took, so a slow machine raises the bound rather than failing.
func maxLogged(elapsed time.Duration) int {
	return jsonrpc.DefaultWarnBurst + int(elapsed/jsonrpc.DefaultWarnInterval) + 1
}

// TestLogFloodIsRateLimited has a real server send 20,000 log
// notifications. The host logs a bounded number of them and counts the
// rest into "suppressed N" summaries, so every message is either logged
// or counted.
func TestLogFloodIsRateLimited(t *testing.T) {
	lg, logs := testLogger()
	s := newTestSession(t, SessionOptions{Logger: lg, Grants: []Grant{pyGrant(t, "chatty", nil, "notify_flood")}})
	e, _ := s.Extension("chatty")
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	const n = 20000
	start := time.Now()
	res, err := s.CallTool(context.Background(), "notify_flood", "f", floodArgs(n, "log", map[string]string{"level": "info", "message": "flood line"}), nil)
	if err != nil || res.Output != "flooded" {
		t.Fatalf("flood call = %+v, %v", res, err)
	}
	// Stopping the server logs the summary of what is still held back.
	e.Stop()
	elapsed := time.Since(start)

	out := logs.String()
	logged := strings.Count(out, "flood line")
	suppressed := suppressedTotal(t, out, regexp.MustCompile(`suppressed (\d+) log messages from the server \(rate limit\)`))
	if bound := maxLogged(elapsed); logged > bound {
		t.Errorf("%d of %d log messages were logged in %s; the rate limit allows at most %d", logged, n, elapsed, bound)
	}
	if logged+suppressed != n {
		t.Errorf("logged %d and suppressed %d of %d log messages; every message must be logged or counted in a summary\n%s", logged, suppressed, n, lastLines(out, 20))
	}
}

// TestRefusedStatusFloodCountsAsViolations has a real server whose status
// opt-in was not approved send 20,000 status/changed notifications. Each
// is a protocol violation: the warnings are rate-limited with a
// "suppressed N" summary, the extension's violation counter counts them,
// and at the violation limit the server is stopped and degraded.
func TestRefusedStatusFloodCountsAsViolations(t *testing.T) {
	lg, logs := testLogger()
	s := newTestSession(t, SessionOptions{
		Logger: lg,
		Grants: []Grant{pyGrant(t, "pushy", map[string]any{"capabilities": []string{"tools", "status"}}, "notify_flood")},
		// A window no machine is slow enough to stretch 100 violations
		// past: the limit is reached whatever the load.
		Extension: ExtensionOptions{ProtocolViolationWindow: time.Hour},
	})
	e, _ := s.Extension("pushy")
	if err := e.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := s.CallTool(context.Background(), "notify_flood", "f", floodArgs(20000, "status/changed", map[string]string{"text": "busy"}), nil)
	elapsed := time.Since(start)
	if !errors.Is(err, jsonrpc.ErrProtocolViolations) || !strings.Contains(err.Error(), "did not declare status") {
		t.Fatalf("flood call = %v, want ErrProtocolViolations naming the refused status/changed", err)
	}
	var st Stats
	for _, x := range s.Stats() {
		if x.Name == "pushy" {
			st = x
		}
	}
	if st.ProtocolViolations != jsonrpc.DefaultMaxViolations || st.Status != "" {
		t.Errorf("stats = violations %d, status %q; want %d violations and no status", st.ProtocolViolations, st.Status, jsonrpc.DefaultMaxViolations)
	}
	// The next call waits for the stop to be recorded, then refuses.
	if _, err := s.CallTool(context.Background(), "notify_flood", "g", floodArgs(1, "log", map[string]string{"message": "m"}), nil); !errors.Is(err, ErrExtensionDegraded) {
		t.Errorf("call after the flood = %v, want the extension degraded", err)
	}
	out := logs.String()
	warned := strings.Count(out, "pushy: dropped status/changed")
	suppressed := suppressedTotal(t, out, regexp.MustCompile(`suppressed (\d+) protocol warnings \(rate limit\)`))
	if bound := maxLogged(elapsed); warned > bound {
		t.Errorf("%d refused status/changed were logged in %s; the rate limit allows at most %d", warned, elapsed, bound)
	}
	if warned+suppressed != jsonrpc.DefaultMaxViolations {
		t.Errorf("warned %d and suppressed %d of the %d refused messages read\n%s", warned, suppressed, jsonrpc.DefaultMaxViolations, lastLines(out, 20))
	}
}

// lastLines returns the last n lines of s, for a failure message.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
