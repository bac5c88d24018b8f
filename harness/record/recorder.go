package record

import (
	"bytes"
	"fmt"
	"slices"
	"sync"

	"yolop.dev/core/tap"
)

// A Recorder collects the dialogues a [tap.Transport] observes. Pass its
// Observe method as the tap's Observe. It may be used concurrently.
type Recorder struct {
	mu    sync.Mutex
	dials map[int]*Dialogue // by tap instance number
	order []int
	names map[string]int // instances per extension name
}

// Observe records one line; it is a [tap.Transport]'s Observe.
func (r *Recorder) Observe(l tap.Line) {
	if l.Oversize {
		return // the host refuses it; nothing to replay
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dials == nil {
		r.dials, r.names = map[int]*Dialogue{}, map[string]int{}
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
	d.Messages = append(d.Messages, Message{Dir: l.Dir, Data: bytes.Clone(l.Data)})
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
