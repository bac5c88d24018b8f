package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// bench transports through the CLI: the table a person reads and the JSON
// a script reads, the lab's servers served by this binary (serve-lab).
func TestBenchTransports(t *testing.T) {
	isolate(t)
	args := []string{"bench", "transports", "--transports", "stdio,go-plugin,in-memory", "--calls", "20", "--idle-calls", "2", "--concurrency", "1,4", "--size", "64,2KiB", "--spawns", "1", "--rounds", "2"}
	out, errOut := mustRun(t, "", args...)
	mustContain(t, "bench transports", out, "Transport lab:", "wasm: not measured: not selected", "spawn → ready", "idle, 64B", "hot, 2KiB, 4 callers", "floor", "stdio", "go-plugin", "in-memory", "calls/s ÷floor")
	mustContain(t, "bench transports progress", errOut, "spawn→ready", "hot, 2KiB, 4 caller(s)")

	out, _ = mustRun(t, "", append(args, "--json")...)
	var rep struct {
		Calls []struct {
			Side     string  `json:"side"`
			P50Ratio float64 `json:"p50_ratio"`
		} `json:"calls"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Calls) != (2+4)*4 {
		t.Fatalf("--json: %v, %d rows\n%s", err, len(rep.Calls), out)
	}

	for _, bad := range [][]string{{"--size", "1GiB"}, {"--concurrency", "0"}, {"--transports", "carrier-pigeon"}} {
		_, errOut, code := cli(t, "", append([]string{"bench", "transports"}, bad...)...)
		if code == 0 || !strings.Contains(errOut, bad[0]) {
			t.Errorf("%v: exit %d, %s", bad, code, errOut)
		}
	}
}
