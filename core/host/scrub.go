package host

import "encoding/json"

func (e *Extension) scrub(s string) string {
	if e.opts.Scrub == nil || s == "" {
		return s
	}
	return e.opts.Scrub(s)
}

// scrubJSON scrubs a JSON value's text, keeping the original when the
// result would not be valid JSON.
func (e *Extension) scrubJSON(raw json.RawMessage) json.RawMessage {
	if e.opts.Scrub == nil || len(raw) == 0 {
		return raw
	}
	out := e.opts.Scrub(string(raw))
	if out == string(raw) || !json.Valid([]byte(out)) {
		return raw
	}
	return json.RawMessage(out)
}

// scrubError makes err's text pass through Scrub (an exit error carries the
// server's stderr tail), keeping it matchable with errors.Is and errors.As.
func (e *Extension) scrubError(err error) error {
	if e.opts.Scrub == nil || err == nil {
		return err
	}
	return &scrubbedError{err: err, text: e.opts.Scrub(err.Error())}
}

type scrubbedError struct {
	err  error
	text string
}

func (s *scrubbedError) Error() string { return s.text }

func (s *scrubbedError) Unwrap() error { return s.err }
