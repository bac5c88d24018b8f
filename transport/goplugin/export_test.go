package goplugin

import "time"

// StartTimeout is the handshake bound t applies.
func (t *Transport) StartTimeout() time.Duration { return t.opts.StartTimeout }
