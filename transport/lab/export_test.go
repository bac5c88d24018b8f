package lab

import (
	"context"
	"fmt"
)

// StartSide starts the server of the side name as Run does, once it has
// answered, and returns its pid. The server is left running.
func StartSide(ctx context.Context, exe, name string) (int, error) {
	o := Options{Exe: exe, Transports: []string{name}}.withDefaults()
	sides, _, _, err := o.sides(ctx)
	if err != nil {
		return 0, err
	}
	for _, s := range sides {
		if s.name != name {
			continue
		}
		c, err := s.start(ctx)
		if err != nil {
			return 0, err
		}
		switch c := c.(type) {
		case *floorClient:
			return c.cmd.Process.Pid, nil
		case *grpcClient:
			return c.client.ReattachConfig().Pid, nil
		case *stackClient:
			return c.inst.PID(), nil
		case *bareClient:
			return c.cmd.Process.Pid, nil
		case *netrpcClient:
			return c.client.ReattachConfig().Pid, nil
		case *mcpClient:
			return c.cmd.Process.Pid, nil
		}
		return 0, fmt.Errorf("side %s has no process", name)
	}
	return 0, fmt.Errorf("no side %s", name)
}

// CheckSession runs checkSession: the session side's calls that show each
// of its parts at work.
func CheckSession(ctx context.Context, exe string) (SessionFacts, error) {
	return checkSession(ctx, Options{Exe: exe})
}

// Quick makes o run the ten-eager start with n extensions a side and
// skip spawn→ready: a test's shortcut through the slowest measurements.
func Quick(o Options, n int) Options {
	o.startN, o.noSpawn = n, true
	return o
}
