// Package testdeadline bounds a test's wait for something that must
// happen by the test binary's own deadline (go test -timeout), not by a
// guess at how fast the machine is: on a loaded machine a wait of seconds
// can run out with nothing wrong.
package testdeadline

import "time"

// Margin is the time kept before the test binary's deadline to report a
// failure in.
const Margin = 30 * time.Second

// Left returns the time left before t's deadline, less [Margin] (at least
// a second), or an hour when the test has no deadline. t is a *testing.T.
func Left(t interface{ Deadline() (time.Time, bool) }) time.Duration {
	d, ok := t.Deadline()
	if !ok {
		return time.Hour
	}
	return max(time.Until(d)-Margin, time.Second)
}
