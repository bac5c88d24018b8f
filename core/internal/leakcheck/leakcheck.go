// Package leakcheck fails a test that leaves goroutines behind. It keeps
// core free of test dependencies; other modules use go.uber.org/goleak.
package leakcheck

import (
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
)

// Check records the goroutines running now and, when the test ends, fails
// it if others are still running after a grace period.
func Check(t testing.TB) { CheckIgnoring(t) }

// CheckIgnoring is [Check] that also ignores goroutines whose stack
// contains one of ignore: those a dependency keeps for the life of the
// process, never one per test.
func CheckIgnoring(t testing.TB, ignore ...string) {
	t.Helper()
	before := map[string]bool{}
	for _, g := range goroutines() {
		before[g.id] = true
	}
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for {
			var leaked []string
			for _, g := range goroutines() {
				if !before[g.id] && !ignorable(g.stack) && !matchesAny(g.stack, ignore) {
					leaked = append(leaked, g.stack)
				}
			}
			if len(leaked) == 0 {
				return
			}
			if time.Now().After(deadline) {
				sort.Strings(leaked)
				t.Errorf("%d goroutine(s) leaked:\n\n%s", len(leaked), strings.Join(leaked, "\n\n"))
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

type goroutine struct{ id, stack string }

func goroutines() []goroutine {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []goroutine
	for _, g := range strings.Split(string(buf), "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		// "goroutine 12 [running]:"
		fields := strings.Fields(header)
		if len(fields) < 2 {
			continue
		}
		out = append(out, goroutine{id: fields[1], stack: g})
	}
	return out
}

func ignorable(stack string) bool {
	for _, s := range []string{
		"testing.(*T).Run",
		"testing.tRunner.func1",
		"testing.runTests",
		"testing.(*M).",
		"runtime.goexit",
		"created by runtime.gc",
		"runtime.MHeap_Scavenger",
		"signal.signal_recv",
		"leakcheck.goroutines",
		"os/signal.loop",
		"testing.runFuzzing",
	} {
		if strings.Contains(stack, s) && !strings.Contains(stack, "yolop.dev/") {
			return true
		}
	}
	return false
}

func matchesAny(stack string, subs []string) bool {
	for _, s := range subs {
		if strings.Contains(stack, s) {
			return true
		}
	}
	return false
}
