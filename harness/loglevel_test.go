package harness

import (
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func TestLogLevel(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want hclog.Level
		bad  bool
	}{
		{"", hclog.Warn, false},
		{"trace", hclog.Trace, false},
		{"DEBUG", hclog.Debug, false},
		{" info ", hclog.Info, false},
		{"warn", hclog.Warn, false},
		{"error", hclog.Error, false},
		{"off", hclog.Off, false},
		{"verbose", hclog.Warn, true},
		{"warning", hclog.Warn, true},
		{"3", hclog.Warn, true},
	} {
		got, err := LogLevel(tc.in, hclog.Warn)
		if got != tc.want || (err != nil) != tc.bad {
			t.Errorf("LogLevel(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.bad)
			continue
		}
		if err == nil {
			continue
		}
		msg := err.Error()
		for _, w := range []string{LogEnv, `"` + strings.TrimSpace(tc.in) + `"`, "trace, debug, info, warn, error, off", "warn"} {
			if !strings.Contains(msg, w) {
				t.Errorf("LogLevel(%q) error %q lacks %q", tc.in, msg, w)
			}
		}
	}
}
