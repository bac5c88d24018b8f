package doctor

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"
)

// Transcript markers: a line that begins with one of them is a message,
// as `yolop session --record` writes them and the dialogue goldens in
// schema/yep/v1/dialogues hold them.
const (
	transcriptToServer = "→ " // the host sent it
	transcriptToHost   = "← " // the server sent it
)

// A TranscriptProblem is one message of a transcript that does not
// conform to the protocol.
type TranscriptProblem struct {
	// Line is the message's line in the transcript, from 1.
	Line int
	// Direction is "host→server" or "server→host".
	Direction string
	// What is the message's method, or "response to <method>".
	What string
	// Detail says what does not conform.
	Detail string
	// Minor problems are tolerated by the host (a missing "jsonrpc"
	// member, an unknown method).
	Minor bool
}

func (p TranscriptProblem) String() string {
	sev := "error"
	if p.Minor {
		sev = "warning"
	}
	return fmt.Sprintf("line %d: %s: %s %s: %s", p.Line, sev, p.Direction, p.What, p.Detail)
}

// A TranscriptReport is what [CheckTranscript] found.
type TranscriptReport struct {
	// Messages counts the messages checked, ToServer and ToHost by
	// direction.
	Messages, ToServer, ToHost int
	// Problems lists every nonconforming message, in transcript order.
	Problems []TranscriptProblem
}

// Failed says whether any problem is more than minor.
func (r TranscriptReport) Failed() bool {
	for _, p := range r.Problems {
		if !p.Minor {
			return true
		}
	}
	return false
}

// CheckTranscript validates every message of a transcript against
// [SchemaJSON], with the checks the doctor applies on a live wire (the
// envelope, the method's direction and kind, params, and a response's
// result or error against the request it answers). A transcript holds one
// message a line, "→ " before what the host sent and "← " before what
// the server sent; every other line (prose, a "-- name --" section
// header, a blank line) is skipped, and a section header starts a new
// exchange, whose request ids are its own. A recording of `yolop session
// --record`, a dialogue golden and a test's capture of an SDK's traffic
// are all transcripts.
func CheckTranscript(r io.Reader) (TranscriptReport, error) {
	s, err := compiledSchemas()
	if err != nil {
		return TranscriptReport{}, err
	}
	w := newWire(nil, s)
	var rep TranscriptReport
	var t *tapInstance
	exchange := func() {
		w.mu.Lock()
		t = &tapInstance{w: w, n: len(w.insts), pending: [2]map[string]string{{}, {}}}
		w.insts = append(w.insts, t)
		w.mu.Unlock()
	}
	exchange()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxObservedLine)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		var dir direction
		switch {
		case bytes.HasPrefix(line, []byte(transcriptToServer)):
			dir = toServer
			line = line[len(transcriptToServer):]
			rep.ToServer++
		case bytes.HasPrefix(line, []byte(transcriptToHost)):
			dir = toHost
			line = line[len(transcriptToHost):]
			rep.ToHost++
		default:
			if strings.HasPrefix(sc.Text(), "-- ") && strings.HasSuffix(sc.Text(), " --") {
				exchange()
			}
			continue
		}
		rep.Messages++
		w.mu.Lock()
		before := len(w.problems)
		w.mu.Unlock()
		w.observeAt(t, dir, time.Time{}, line)
		w.mu.Lock()
		found := w.problems[before:]
		w.mu.Unlock()
		for _, p := range found {
			rep.Problems = append(rep.Problems, TranscriptProblem{Line: n, Direction: p.dir.String(), What: p.what, Detail: p.detail, Minor: p.minor})
		}
	}
	if err := sc.Err(); err != nil {
		return rep, fmt.Errorf("reading the transcript: %w", err)
	}
	return rep, nil
}
