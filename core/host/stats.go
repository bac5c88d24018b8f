package host

import (
	"slices"
	"sync"
	"time"
)

// Stats attributes work and failures to one capability, so a user can see
// which extension is slow or failing.
type Stats struct {
	Name  string
	State State
	// Reason explains a degraded or off state.
	Reason string
	Calls  int64
	Errors int64
	// P50 and P99 are tool-call latencies over the recent calls.
	P50, P99 time.Duration
	Restarts int64
	// TraceDropped counts trace events dropped because the extension's
	// queue was full.
	TraceDropped int64
	// HookDecisions counts decisions by kind: allow, block, mutate, error.
	HookDecisions map[string]int64
	// ProtocolViolations counts the messages the extension's servers sent
	// that broke the protocol: lines that are not JSON, invalid or
	// oversized messages, and notifications for an opt-in that was not
	// approved; see [ExtensionOptions.MaxProtocolViolations].
	ProtocolViolations int64
	// Status is the extension's last status text.
	Status string
	// Refusals lists what the clamp refused at the last handshake.
	Refusals []Refusal
}

// counters is the mutable side of Stats.
type counters struct {
	mu           sync.Mutex
	calls, errs  int64
	restarts     int64
	traceDropped int64
	violations   int64
	hooks        map[string]int64
	status       string
	lat          [512]time.Duration
	nlat         int
}

func (c *counters) call(d time.Duration, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if err != nil {
		c.errs++
	}
	c.lat[c.nlat%len(c.lat)] = d
	c.nlat++
}

func (c *counters) hook(decision string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hooks == nil {
		c.hooks = map[string]int64{}
	}
	c.hooks[decision]++
}

func (c *counters) add(f func(c *counters)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(c)
}

func (c *counters) snapshot(s *Stats) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s.Calls, s.Errors, s.Restarts, s.TraceDropped, s.Status = c.calls, c.errs, c.restarts, c.traceDropped, c.status
	s.ProtocolViolations = c.violations
	s.HookDecisions = map[string]int64{}
	for k, v := range c.hooks {
		s.HookDecisions[k] = v
	}
	n := min(c.nlat, len(c.lat))
	if n == 0 {
		return
	}
	lat := slices.Clone(c.lat[:n])
	slices.Sort(lat)
	s.P50 = lat[(n-1)*50/100]
	s.P99 = lat[(n-1)*99/100]
}
