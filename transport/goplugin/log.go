package goplugin

import "github.com/hashicorp/go-hclog"

// quiet is the host logger as go-plugin's own logger, with go-plugin's
// messages demoted to debug (trace stays trace): every failure it logs at
// warn or error ("plugin process exited", "plugin failed to exit
// gracefully") the transport reports itself, naming the extension, through
// the error it returns or the instance's Err.
type quiet struct{ hclog.Logger }

func (q quiet) Log(level hclog.Level, msg string, args ...any) {
	if level > hclog.Debug {
		level = hclog.Debug
	}
	q.Logger.Log(level, msg, args...)
}
func (q quiet) Info(msg string, args ...any)  { q.Logger.Debug(msg, args...) }
func (q quiet) Warn(msg string, args ...any)  { q.Logger.Debug(msg, args...) }
func (q quiet) Error(msg string, args ...any) { q.Logger.Debug(msg, args...) }
func (q quiet) IsInfo() bool                  { return q.Logger.IsDebug() }
func (q quiet) IsWarn() bool                  { return q.Logger.IsDebug() }
func (q quiet) IsError() bool                 { return q.Logger.IsDebug() }

func (q quiet) With(args ...any) hclog.Logger       { return quiet{q.Logger.With(args...)} }
func (q quiet) Named(name string) hclog.Logger      { return quiet{q.Logger.Named(name)} }
func (q quiet) ResetNamed(name string) hclog.Logger { return quiet{q.Logger.ResetNamed(name)} }
