package record

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"yolop.dev/core"
	"yolop.dev/core/tap"
)

// Compare reports how got differs from want, two JSON messages, ignoring
// the volatile members: "" when they match, else the first differing
// member and both values ("result.output: want \"hi\", got \"HI\"").
func Compare(want, got []byte, volatile []string) string {
	w, err := decode(want)
	if err != nil {
		return fmt.Sprintf("the recorded line is not JSON: %v", err)
	}
	g, err := decode(got)
	if err != nil {
		return fmt.Sprintf("not JSON: %v", err)
	}
	for _, p := range volatile {
		path := strings.Split(p, ".")
		w = strip(w, path)
		g = strip(g, path)
	}
	return diff("", w, g)
}

func decode(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// strip removes the member at path from v.
func strip(v any, path []string) any {
	if len(path) == 0 {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range x {
			if path[0] != "*" && path[0] != k {
				continue
			}
			if len(path) == 1 {
				delete(x, k)
			} else {
				x[k] = strip(sub, path[1:])
			}
		}
	case []any:
		for i, sub := range x {
			if path[0] == "*" || path[0] == strconv.Itoa(i) {
				if len(path) > 1 {
					x[i] = strip(sub, path[1:])
				}
			}
		}
	}
	return v
}

// diff names the first member where got differs from want.
func diff(at string, want, got any) string {
	name := at
	if name == "" {
		name = "the message"
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(w)+len(g))
		for k := range w {
			keys = append(keys, k)
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			sub := join(at, k)
			wv, wok := w[k]
			gv, gok := g[k]
			switch {
			case !gok:
				return fmt.Sprintf("%s: missing, want %s", sub, show(wv))
			case !wok:
				return fmt.Sprintf("%s: unexpected, got %s", sub, show(gv))
			}
			if d := diff(sub, wv, gv); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok {
			break
		}
		for i := range min(len(w), len(g)) {
			if d := diff(join(at, strconv.Itoa(i)), w[i], g[i]); d != "" {
				return d
			}
		}
		if len(w) != len(g) {
			return fmt.Sprintf("%s: %d elements, want %d", name, len(g), len(w))
		}
		return ""
	}
	if reflect.DeepEqual(want, got) {
		return ""
	}
	return fmt.Sprintf("%s: want %s, got %s", name, show(want), show(got))
}

func join(at, k string) string {
	if at == "" {
		return k
	}
	return at + "." + k
}

func show(v any) string {
	b, _ := json.Marshal(v)
	const max = 120
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

// A Divergence is the first place a replayed server departs from its
// recording.
type Divergence struct {
	// Dialogue is the section replayed.
	Dialogue string
	// Line is the recorded line's number in the file, 0 when the server
	// sent more than was recorded.
	Line int
	// Want is the recorded server line, empty when the server sent more
	// than was recorded.
	Want string
	// Got is what the server sent instead, empty when its output ended.
	Got string
	// Reason says how they differ.
	Reason string
}

func (d *Divergence) Error() string {
	var b strings.Builder
	if d.Line > 0 {
		fmt.Fprintf(&b, "dialogue %s diverges at line %d: %s\n", d.Dialogue, d.Line, d.Reason)
	} else {
		fmt.Fprintf(&b, "dialogue %s diverges after its last line: %s\n", d.Dialogue, d.Reason)
	}
	want, got := d.Want, d.Got
	if want == "" {
		want = "(nothing more)"
	}
	if got == "" {
		got = "(the server's output ended)"
	}
	fmt.Fprintf(&b, "  want %s%s\n  got  %s%s", ToHostMark, want, ToHostMark, got)
	return b.String()
}

// Options configure [Replay].
type Options struct {
	// Volatile are the members not compared (see [Compare]).
	Volatile []string
	// Wait bounds the wait for each server line. Zero means 30 seconds.
	Wait time.Duration
	// StopGrace is how long the server has to exit after its stdin
	// closes. Zero means 5 seconds.
	StopGrace time.Duration
}

// ErrTimeout is wrapped by the error of [Replay] when the server sent
// nothing within Options.Wait while a recorded line was expected.
var ErrTimeout = errors.New("no message from the server in time")

// Replay plays the host side of d against inst: each host line is written
// as recorded (a response to a server request gets the id the server used
// this time) once every server line recorded before it has been received,
// and each server line received is compared with [Compare]. A received
// line matches the first recorded server line not yet received that it
// equals, so the order of a server's concurrent messages may differ from
// the recording's.
// Once the dialogue ends, stdin is closed and the server must end its
// output without more messages. Replay stops the instance before it
// returns.
//
// It returns a *[Divergence] for the first server line that differs, is
// missing or is extra, and another error when the dialogue could not be
// played (the server stopped reading, or o.Wait elapsed).
func Replay(ctx context.Context, inst core.Instance, d Dialogue, o Options) error {
	wait, grace := o.Wait, o.StopGrace
	if wait == 0 {
		wait = 30 * time.Second
	}
	if grace == 0 {
		grace = 5 * time.Second
	}
	lines := make(chan []byte)
	readDone := make(chan error, 1)
	stop := make(chan struct{})
	go func() {
		r := bufio.NewReader(inst.Stdout())
		for {
			l, err := r.ReadBytes('\n')
			if l = bytes.TrimRight(l, "\r\n"); len(bytes.TrimSpace(l)) > 0 {
				select {
				case lines <- l:
				case <-stop:
					readDone <- nil
					return
				}
			}
			if err != nil {
				if err == io.EOF {
					err = nil
				}
				readDone <- err
				return
			}
		}
	}()
	defer func() {
		close(stop)
		_ = inst.Stop(grace)
	}()
	ended := false
	next := func() ([]byte, error) {
		if ended {
			return nil, nil
		}
		timer := time.NewTimer(wait)
		defer timer.Stop()
		select {
		case l := <-lines:
			return l, nil
		case err := <-readDone:
			ended = true
			return nil, err
		case <-timer.C:
			return nil, fmt.Errorf("dialogue %s: %w (waited %s)", d.Name, ErrTimeout, wait)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	ids := map[string]json.RawMessage{} // server request ids: recorded → this run
	matched := make([]bool, len(d.Messages))
	// await reads server lines until every server line recorded before
	// index upto has been received. A line may match any server line
	// still unreceived, the first equal one: a server's concurrent
	// messages (a cancel's answer and the cancelled call's) come in either
	// order, and the host may have written its next line in between.
	await := func(upto int) error {
		for {
			first := -1
			for j := range upto {
				if d.Messages[j].Dir == tap.ToHost && !matched[j] {
					first = j
					break
				}
			}
			if first < 0 {
				return nil
			}
			got, err := next()
			if err != nil {
				return err
			}
			want := d.Messages[first]
			if got == nil {
				return &Divergence{Dialogue: d.Name, Line: want.Line, Want: string(want.Data), Reason: "the server's output ended" + stderr(inst)}
			}
			j := first
			reason := Compare(want.Data, got, o.Volatile)
			for k := first + 1; reason != "" && k < len(d.Messages); k++ {
				if d.Messages[k].Dir == tap.ToHost && !matched[k] && Compare(d.Messages[k].Data, got, o.Volatile) == "" {
					j, reason = k, ""
				}
			}
			if reason != "" {
				return &Divergence{Dialogue: d.Name, Line: want.Line, Want: string(want.Data), Got: string(got), Reason: reason}
			}
			matched[j] = true
			var w, g struct {
				ID     json.RawMessage `json:"id"`
				Method *string         `json:"method"`
			}
			if json.Unmarshal(d.Messages[j].Data, &w) == nil && json.Unmarshal(got, &g) == nil && w.Method != nil && w.ID != nil && g.ID != nil {
				ids[string(w.ID)] = g.ID
			}
		}
	}
	for i, m := range d.Messages {
		if m.Dir != tap.ToServer {
			continue
		}
		if err := await(i); err != nil {
			return err
		}
		line := m.Data
		var env struct {
			ID     json.RawMessage `json:"id"`
			Method *string         `json:"method"`
		}
		if json.Unmarshal(line, &env) == nil && env.Method == nil && env.ID != nil {
			if id, ok := ids[string(env.ID)]; ok && !bytes.Equal(id, env.ID) {
				line = withID(line, id)
			}
		}
		if _, err := inst.Stdin().Write(append(slices.Clip(line), '\n')); err != nil {
			return fmt.Errorf("dialogue %s, line %d: the server stopped reading its stdin (%v)%s", d.Name, m.Line, err, stderr(inst))
		}
	}
	if err := await(len(d.Messages)); err != nil {
		return err
	}
	_ = inst.Stdin().Close()
	got, err := next()
	if err != nil {
		return err
	}
	if got != nil {
		return &Divergence{Dialogue: d.Name, Got: string(got), Reason: "the server sent a line the recording does not have"}
	}
	return nil
}

// withID returns the JSON object line with its "id" member replaced.
func withID(line []byte, id json.RawMessage) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return line
	}
	m["id"] = id
	b, err := json.Marshal(m)
	if err != nil {
		return line
	}
	return b
}

func stderr(inst core.Instance) string {
	tail := inst.StderrTail()
	if len(tail) == 0 {
		return ""
	}
	return "; its stderr ends: " + strings.Join(tail, " | ")
}
