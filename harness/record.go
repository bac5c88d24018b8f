package harness

import (
	"fmt"
	"os"
	"time"

	"yolop.dev/core"
	"yolop.dev/core/tap"
	"yolop.dev/harness/record"
)

// A recording writes a session's YEP dialogues to a file when the
// session closes (see SessionOptions.Record).
type recording struct {
	path  string
	file  *os.File
	rec   record.Recorder
	start time.Time
}

// recordTransport returns t, tapped to record into path when path is set.
// A file that cannot be created is a warning: the session runs
// unrecorded.
func (s *Session) recordTransport(path string, t core.Transport, warnings *[]string) core.Transport {
	if path == "" {
		return t
	}
	f, err := os.Create(path)
	if err != nil {
		*warnings = append(*warnings, fmt.Sprintf("the session is not recorded: %v (name a file in a directory that exists and you may write)", err))
		return t
	}
	s.rec = &recording{path: path, file: f, start: time.Now()}
	s.rec.rec.Scrub = s.h.Scrubber().Scrub
	return &tap.Transport{Inner: t, Observe: s.rec.rec.Observe}
}

// saveRecording writes the recording, once the servers have stopped.
func (s *Session) saveRecording() {
	r := s.rec
	if r == nil {
		return
	}
	s.rec = nil
	comment := fmt.Sprintf(`YEP dialogues recorded by yolop session, started %s.
One section per extension server instance; each line is one message,
"→ " sent by the host, "← " sent by the server, in the order the host saw
them. Replay a server against it with: yolop ext replay FILE <dir|name>
`, r.start.UTC().Format(time.RFC3339))
	_, err := r.file.Write(r.rec.File(comment).Format())
	if cerr := r.file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		s.h.log.Error("the session recording is incomplete", "file", r.path, "error", err)
	}
}
