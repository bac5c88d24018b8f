// Package record writes and replays YEP dialogues: what a host and each
// capability server said to each other, as a txtar file.
//
// A recording is made by a [Recorder] that observes a session's transport
// through [tap.Transport]. Its file has a prose header, then one section
// per server instance, named after the extension ("echo", then "echo#2"
// for the second instance of echo in the session, after a restart). A
// section is the instance's ndjson, one message a line, each line marked
// with who sent it:
//
//	→ {"jsonrpc":"2.0","id":1,"method":"initialize",...}   the host sent it
//	← {"jsonrpc":"2.0","id":1,"result":{...}}              the server sent it
//
// The lines are in the order the host saw them: a host line when the host
// wrote it, a server line when the host could first read it. That one
// order keeps the interleaving of both directions, which a replay needs to
// know when to send each host message.
//
// A header line "volatile: p1, p2" names the members that differ between
// runs and are not compared (see [Compare]); [DefaultVolatile] is what a
// session recording declares.
//
// [Replay] plays the host side of a dialogue against a new instance of the
// server and reports the first server line that differs.
package record

import (
	"bytes"
	"fmt"
	"strings"

	"golang.org/x/tools/txtar"

	"yolop.dev/core/tap"
)

// Markers of the two directions, at the start of each message line.
const (
	ToServerMark = "→ "
	ToHostMark   = "← "
)

// DefaultVolatile lists the members a session recording declares
// volatile: request ids, the session's id and workspace, timestamps and
// durations.
var DefaultVolatile = []string{"id", "params.session_id", "params.workspace_root", "params.traceparent", "params.timestamp", "params.data.duration_ms", "result.duration_ms"}

// A Message is one line of a dialogue.
type Message struct {
	// Dir is who sent it.
	Dir tap.Direction
	// Data is the JSON message as it travelled, without its newline.
	Data []byte
	// Line is its line number in the file it was parsed from, from 1;
	// 0 for a message not read from a file.
	Line int
}

// A Dialogue is what a host and one server instance said to each other.
type Dialogue struct {
	// Name is the section name: the extension name, with "#n" for its
	// n-th instance from the second on.
	Name string
	// Messages are the lines in the order the host saw them.
	Messages []Message
}

// Extension returns the extension name of the dialogue: its Name
// without an instance number.
func (d Dialogue) Extension() string {
	name, _, _ := strings.Cut(d.Name, "#")
	return name
}

// A File is a recording: a prose header and the dialogues.
type File struct {
	// Comment is the prose header, without the volatile line.
	Comment string
	// Volatile are the members [Compare] ignores, as dotted paths from the
	// message's root ("result.duration_ms"); "*" matches any member or
	// array element.
	Volatile []string
	// Dialogues are the server instances, in the order they started.
	Dialogues []Dialogue
}

const volatilePrefix = "volatile:"

// Format returns the file as txtar.
func (f *File) Format() []byte {
	var a txtar.Archive
	comment := strings.TrimRight(f.Comment, "\n")
	if comment != "" {
		comment += "\n"
	}
	if len(f.Volatile) > 0 {
		comment += volatilePrefix + " " + strings.Join(f.Volatile, ", ") + "\n"
	}
	a.Comment = []byte(comment)
	for _, d := range f.Dialogues {
		var b bytes.Buffer
		for _, m := range d.Messages {
			if m.Dir == tap.ToServer {
				b.WriteString(ToServerMark)
			} else {
				b.WriteString(ToHostMark)
			}
			b.Write(m.Data)
			b.WriteByte('\n')
		}
		a.Files = append(a.Files, txtar.File{Name: d.Name, Data: b.Bytes()})
	}
	return txtar.Format(&a)
}

// Parse reads a recording. name labels its errors (the file's path).
func Parse(name string, data []byte) (*File, error) {
	a := txtar.Parse(data)
	f := &File{}
	var comment []string
	for l := range strings.Lines(string(a.Comment)) {
		if v, ok := strings.CutPrefix(l, volatilePrefix); ok {
			for _, p := range strings.Split(v, ",") {
				if p = strings.TrimSpace(p); p != "" {
					f.Volatile = append(f.Volatile, p)
				}
			}
			continue
		}
		comment = append(comment, l)
	}
	f.Comment = strings.Join(comment, "")
	// Line numbers: the header, then each section's marker line and body.
	line := bytes.Count(a.Comment, []byte("\n")) + 1
	for _, s := range a.Files {
		line++ // the "-- name --" line
		d := Dialogue{Name: s.Name}
		for l := range strings.Lines(string(s.Data)) {
			text := strings.TrimRight(l, "\r\n")
			n := line
			line++
			var m Message
			switch {
			case strings.TrimSpace(text) == "":
				continue
			case strings.HasPrefix(text, ToServerMark):
				m = Message{Dir: tap.ToServer, Data: []byte(text[len(ToServerMark):]), Line: n}
			case strings.HasPrefix(text, ToHostMark):
				m = Message{Dir: tap.ToHost, Data: []byte(text[len(ToHostMark):]), Line: n}
			default:
				return nil, fmt.Errorf("%s:%d: in section %q, a line that starts with neither %q (host to server) nor %q (server to host); each line of a dialogue is one marked JSON message", name, n, s.Name, strings.TrimSpace(ToServerMark), strings.TrimSpace(ToHostMark))
			}
			d.Messages = append(d.Messages, m)
		}
		f.Dialogues = append(f.Dialogues, d)
	}
	if len(f.Dialogues) == 0 {
		return nil, fmt.Errorf("%s: no dialogue in the file (a recording has a \"-- <extension> --\" section per server; make one with `yolop session --record %s`)", name, name)
	}
	return f, nil
}
