package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioTransport is the gateway's stdio transport: the go-sdk's
// newline-delimited JSON over r and w, with r read through a [lineFilter]
// so that one malformed line from the client is answered with a JSON-RPC
// error and skipped instead of ending the session (the go-sdk's stream
// decoder cannot resume after bad input, and closes the connection).
func stdioTransport(r io.ReadCloser, w io.Writer, log hclog.Logger) sdk.Transport {
	lw := &lockedWriter{w: w}
	f := &lineFilter{r: bufio.NewReader(r), w: lw, max: sdk.DefaultMaxLineLength, log: log}
	return &sdk.IOTransport{Reader: readCloser{f, r}, Writer: lw, MaxLineLength: -1}
}

type readCloser struct {
	io.Reader
	io.Closer
}

// lockedWriter writes one message per Write call, so the filter's answers
// and the go-sdk's messages (each one Write) never interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (*lockedWriter) Close() error { return nil }

// A lineFilter reads newline-delimited JSON-RPC and passes on only the
// lines that decode as a message, or a batch of messages. Any other line
// is answered on w — -32700 when it is not JSON (or nests too deep),
// -32600 when it is JSON but not a JSON-RPC message, or is over max bytes
// — and skipped. Blank lines are skipped.
type lineFilter struct {
	r   *bufio.Reader
	w   io.Writer
	max int
	log hclog.Logger

	pending []byte // a good line not yet read, with its newline
	err     error  // the read error after pending
}

// Read implements [io.Reader].
func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		line, tooLong, err := f.readLine()
		f.err = err
		if tooLong {
			f.answer(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("the message is over the %d-byte limit on one line; it was skipped", f.max))
			continue
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if id, code, msg := check(line); code != 0 {
			f.answer(id, code, msg)
			continue
		}
		f.pending = append(line, '\n')
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// readLine reads one line without its newline; a line over f.max bytes is
// read to its end and dropped, reported by tooLong.
func (f *lineFilter) readLine() (line []byte, tooLong bool, err error) {
	for {
		chunk, err := f.r.ReadSlice('\n')
		if !tooLong {
			line = append(line, chunk...)
			if len(line) > f.max+1 {
				line, tooLong = nil, true
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), tooLong, err
	}
}

// check reports why a line is not a JSON-RPC message (or batch), as a
// JSON-RPC error code and message, with the line's id when it has a
// usable one; code 0 means the line is good.
func check(line []byte) (id any, code int64, msg string) {
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		return nil, jsonrpc.CodeParseError, fmt.Sprintf("parse error: the line is not JSON (%v); it was skipped", err)
	}
	if bytes.HasPrefix(bytes.TrimSpace(line), []byte("[")) {
		var batch []json.RawMessage
		if err := json.Unmarshal(line, &batch); err != nil || len(batch) == 0 {
			return nil, jsonrpc.CodeInvalidRequest, "invalid request: an empty batch, or one that is not an array of messages; it was skipped"
		}
		for _, m := range batch {
			if _, err := jsonrpc.DecodeMessage(m); err != nil {
				return nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request in a batch: %v; the batch was skipped", err)
			}
		}
		return nil, 0, ""
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		var withID struct {
			ID any `json:"id"`
		}
		if json.Unmarshal(line, &withID) == nil {
			if v, err := jsonrpc.MakeID(withID.ID); err == nil && v.IsValid() {
				id = withID.ID
			}
		}
		return id, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: %v; it was skipped", err)
	}
	return nil, 0, ""
}

// answer writes the error response to a refused line.
func (f *lineFilter) answer(id any, code int64, msg string) {
	f.log.Debug("refused a malformed line from the MCP client", "code", code, "reason", msg)
	b, err := json.Marshal(struct {
		JSONRPC string         `json:"jsonrpc"`
		ID      any            `json:"id"`
		Error   *jsonrpc.Error `json:"error"`
	}{"2.0", id, &jsonrpc.Error{Code: code, Message: msg}})
	if err != nil {
		return
	}
	if _, err := f.w.Write(append(b, '\n')); err != nil {
		f.log.Debug("cannot answer the MCP client", "error", err)
	}
}
