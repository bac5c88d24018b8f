package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"yolop.dev/core/tap"
)

// A Recorder collects the dialogues a [tap.Transport] observes. Pass its
// Observe method as the tap's Observe. It may be used concurrently.
type Recorder struct {
	// Scrub, if set, rewrites every line before it is kept: a session
	// passes its secret scrubber, so no stored secret value reaches the
	// file.
	Scrub func(string) string

	mu      sync.Mutex
	dials   map[int]*Dialogue // by tap instance number
	order   []int
	names   map[string]int          // instances per extension name
	secrets map[int]map[string]bool // ids of secret ui/ask requests, per instance
}

// SecretAnswer is what a recording keeps of the answer to a ui/ask that
// asked for a secret.
const SecretAnswer = "[redacted: secret answer]"

// maskSecretAnswer returns data with the answer replaced when it answers
// a secret ui/ask of the same instance, and remembers the ids of such
// asks as they pass toward the host.
func (r *Recorder) maskSecretAnswer(l tap.Line, data []byte) []byte {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Secret bool `json:"secret"`
		} `json:"params"`
		Result map[string]any `json:"result"`
	}
	if json.Unmarshal(data, &m) != nil || m.ID == nil {
		return data
	}
	if l.Dir == tap.ToHost {
		if m.Method == "ui/ask" && m.Params.Secret {
			if r.secrets[l.Instance] == nil {
				r.secrets[l.Instance] = map[string]bool{}
			}
			r.secrets[l.Instance][string(m.ID)] = true
		}
		return data
	}
	if !r.secrets[l.Instance][string(m.ID)] || m.Result == nil {
		return data
	}
	delete(r.secrets[l.Instance], string(m.ID))
	if _, ok := m.Result["answer"]; ok {
		m.Result["answer"] = SecretAnswer
	}
	out, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": m.Result})
	if err != nil {
		return data
	}
	return out
}

// Observe records one line; it is a [tap.Transport]'s Observe.
func (r *Recorder) Observe(l tap.Line) {
	if l.Oversize {
		return // the host refuses it; nothing to replay
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dials == nil {
		r.dials, r.names, r.secrets = map[int]*Dialogue{}, map[string]int{}, map[int]map[string]bool{}
	}
	data := r.maskSecretAnswer(l, l.Data)
	if r.Scrub != nil {
		data = []byte(r.Scrub(string(data)))
	}
	d := r.dials[l.Instance]
	if d == nil {
		r.names[l.Name]++
		name := l.Name
		if n := r.names[l.Name]; n > 1 {
			name = fmt.Sprintf("%s#%d", l.Name, n)
		}
		d = &Dialogue{Name: name}
		r.dials[l.Instance] = d
		r.order = append(r.order, l.Instance)
	}
	d.Messages = append(d.Messages, Message{Dir: l.Dir, Data: bytes.Clone(data)})
}

// File returns what was recorded so far, with comment as its prose header
// and [DefaultVolatile] declared.
func (r *Recorder) File(comment string) *File {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := &File{Comment: comment, Volatile: slices.Clone(DefaultVolatile)}
	for _, n := range r.order {
		d := r.dials[n]
		f.Dialogues = append(f.Dialogues, Dialogue{Name: d.Name, Messages: slices.Clone(d.Messages)})
	}
	return f
}
