package harness

import (
	"fmt"
	"strings"

	"github.com/hashicorp/go-hclog"
)

// LogEnv is the environment variable that sets the log level of yolop's
// front-ends (the CLI, the REPL, the extensions that share its logging).
const LogEnv = "YOLOP_LOG"

// LogLevels are the values [LogLevel] accepts, most verbose first.
var LogLevels = []string{"trace", "debug", "info", "warn", "error", "off"}

// LogLevel parses a [LogEnv] value, ignoring case and surrounding space.
// An empty value is def. An unknown one is def too, with an error naming
// the value, the accepted values and the level used instead, for the
// front-end to print as a warning before it carries on.
func LogLevel(value string, def hclog.Level) (hclog.Level, error) {
	v := strings.TrimSpace(value)
	if v == "" {
		return def, nil
	}
	if l := hclog.LevelFromString(v); l != hclog.NoLevel {
		return l, nil
	}
	return def, fmt.Errorf("%s=%q is not a log level; use one of %s (logging at %s instead)", LogEnv, v, strings.Join(LogLevels, ", "), def)
}
