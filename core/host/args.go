package host

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
)

// An argsCheck is one tool's compiled argument check. The registry keeps
// it across rebuilds while the tool's input_schema is unchanged, so a
// schema is compiled once, on the tool's first call, and never per call.
type argsCheck struct {
	schema json.RawMessage // what was compiled
	once   sync.Once
	check  func(json.RawMessage) error
	err    error // the schema does not compile
}

// argsChecks gives every tool of the registry its check, reusing the
// previous registry's when the capability, tool and schema are the same
// (an extension's tools come from its approved grant, so they are compiled
// once per grant). Called with s.mu held.
func (s *Session) argsChecks() {
	old := s.checks
	s.checks = make(map[string]*argsCheck, len(s.toolList))
	for _, t := range s.toolList {
		key := t.cap.Name() + "\x00" + t.def.Name
		c := old[key]
		if c == nil || !bytes.Equal(c.schema, t.def.InputSchema) {
			c = &argsCheck{schema: t.def.InputSchema}
		}
		s.checks[key] = c
		t.args = c
	}
}

// checkArgs runs SessionOptions.CompileArgs's check on a call's
// arguments, compiling the tool's schema on its first call; without
// CompileArgs it checks that they are JSON.
func (s *Session) checkArgs(t *toolEntry, args json.RawMessage) error {
	var err error
	if c := t.args; s.opts.CompileArgs != nil && c != nil {
		c.once.Do(func() { c.check, c.err = s.opts.CompileArgs(c.schema) })
		err = c.err
		if err == nil {
			err = c.check(args)
		}
	} else if jerr := json.Unmarshal(args, new(json.RawMessage)); jerr != nil {
		err = fmt.Errorf("not valid JSON: %w", jerr)
	}
	if err != nil {
		return newError(ErrInvalidArgs, err, "arguments of tool %q: %v", t.name, err)
	}
	return nil
}
