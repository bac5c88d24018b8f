package jsonrpc

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// DefaultMaxMessageSize is the largest message a reader accepts when no
// limit is configured: 16 MiB.
const DefaultMaxMessageSize = 16 << 20

// A MessageReader reads framed messages. Read returns one message; the
// slice is valid only until the next call. A message over the size limit is
// skipped and reported as a *[TooLargeError]; reading may continue after it.
// Any other error is final.
type MessageReader interface {
	Read() ([]byte, error)
}

// A MessageWriter writes framed messages. Write is not safe for concurrent
// use; the connection serialises it.
type MessageWriter interface {
	Write(msg []byte) error
}

// A Framer turns byte streams into message streams.
type Framer interface {
	NewReader(r io.Reader, maxSize int) MessageReader
	NewWriter(w io.Writer) MessageWriter
}

// A TooLargeError reports a message over the reader's size limit. The
// message was skipped; Prefix holds its first bytes, from which the
// connection recovers the id to answer or fail.
type TooLargeError struct {
	Limit  int
	Prefix []byte
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("message exceeds %d bytes; skipped", e.Limit)
}

const prefixKeep = 1024

// NDJSON frames one JSON object per line, as YEP does. Blank lines are
// ignored and a trailing "\r" is dropped.
var NDJSON Framer = ndjson{}

type ndjson struct{}

func (ndjson) NewReader(r io.Reader, max int) MessageReader {
	if max <= 0 {
		max = DefaultMaxMessageSize
	}
	fw := &fillWatch{r: r}
	return &lineReader{fw: fw, br: bufio.NewReaderSize(fw, smallReadBuffer), max: max}
}

// A line reader starts with a small buffer and moves to a large one once
// the stream shows it needs it: a line longer than the buffer, or a read
// that filled all the space it was given (more was waiting). A connection
// that carries handshakes and short calls, as most do, never pays for the
// large buffer: allocating and zeroing 64 KiB per connection was most of
// what a session start allocated.
const (
	smallReadBuffer = 4 << 10
	largeReadBuffer = 64 << 10 // a Linux pipe's capacity: one read drains it
)

// fillWatch notes a read that filled its whole buffer.
type fillWatch struct {
	r    io.Reader
	full bool
}

func (f *fillWatch) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if n == len(p) && n > 0 {
		f.full = true
	}
	return n, err
}

func (ndjson) NewWriter(w io.Writer) MessageWriter { return &lineWriter{w: w} }

type lineReader struct {
	fw  *fillWatch
	br  *bufio.Reader
	max int
	buf []byte
}

// Buffered reports how many bytes of further messages are already read.
func (l *lineReader) Buffered() int { return l.br.Buffered() }

// grow moves to the large buffer when the stream has asked for it and the
// small one holds nothing unread, so no byte is lost or reordered.
func (l *lineReader) grow() {
	if l.fw.full && l.br.Size() < largeReadBuffer && l.br.Buffered() == 0 {
		l.br = bufio.NewReaderSize(l.fw, largeReadBuffer)
	}
}

func (l *lineReader) Read() ([]byte, error) {
	for {
		line, err := l.readLine()
		if err != nil {
			return nil, err
		}
		line = bytes.TrimRight(line, "\r")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		return line, nil
	}
}

// readLine reads up to and excluding the next '\n' with bounded memory.
func (l *lineReader) readLine() ([]byte, error) {
	l.grow() // the line last returned is no longer in use
	frag, err := l.br.ReadSlice('\n')
	if err == nil && len(frag)-1 <= l.max {
		return frag[:len(frag)-1], nil // the whole line is in the buffer
	}
	l.buf = append(l.buf[:0], frag...)
	for err == bufio.ErrBufferFull && len(l.buf) <= l.max {
		l.grow()
		frag, err = l.br.ReadSlice('\n')
		l.buf = append(l.buf, frag...)
	}
	line := l.buf
	if err == nil {
		line = line[:len(line)-1]
	}
	switch {
	case len(line) > l.max:
		return nil, l.discard(err)
	case err == nil || (err == io.EOF && len(line) > 0):
		return line, nil // a final line without its newline still counts
	}
	return nil, err
}

// discard skips the rest of an oversized line, keeping a prefix.
func (l *lineReader) discard(err error) error {
	prefix := append([]byte(nil), l.buf[:min(len(l.buf), prefixKeep)]...)
	if cap(l.buf) > 1<<20 {
		l.buf = nil // do not pin a huge buffer
	}
	for err == bufio.ErrBufferFull {
		_, err = l.br.ReadSlice('\n')
	}
	if err != nil && err != io.EOF {
		return err
	}
	return &TooLargeError{Limit: l.max, Prefix: prefix}
}

type lineWriter struct {
	w   io.Writer
	buf []byte
}

func (l *lineWriter) Write(msg []byte) error {
	if bytes.IndexByte(msg, '\n') >= 0 {
		return fmt.Errorf("jsonrpc: message contains a raw newline")
	}
	l.buf = append(append(l.buf[:0], msg...), '\n')
	_, err := l.w.Write(l.buf)
	if cap(l.buf) > 1<<20 {
		l.buf = nil
	}
	return err
}

// ContentLength frames messages with LSP-style "Content-Length: N" headers.
var ContentLength Framer = contentLength{}

type contentLength struct{}

func (contentLength) NewReader(r io.Reader, max int) MessageReader {
	if max <= 0 {
		max = DefaultMaxMessageSize
	}
	return &headerReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

func (contentLength) NewWriter(w io.Writer) MessageWriter { return &headerWriter{w: w} }

type headerReader struct {
	br  *bufio.Reader
	max int
	buf []byte
}

func (h *headerReader) Read() ([]byte, error) {
	length := -1
	for {
		line, err := h.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			return nil, fmt.Errorf("jsonrpc: header line too long")
		}
		if err != nil {
			if err == io.EOF && len(line) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		s := strings.TrimRight(string(line), "\r\n")
		if s == "" {
			if length < 0 {
				continue // tolerate stray blank lines between messages
			}
			break
		}
		name, value, ok := strings.Cut(s, ":")
		if !ok {
			return nil, fmt.Errorf("jsonrpc: malformed header %q", s)
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("jsonrpc: bad Content-Length %q", value)
			}
			length = n
		}
	}
	if length > h.max {
		prefix := make([]byte, min(length, prefixKeep))
		if _, err := io.ReadFull(h.br, prefix); err != nil {
			return nil, err
		}
		if _, err := io.CopyN(io.Discard, h.br, int64(length-len(prefix))); err != nil {
			return nil, err
		}
		return nil, &TooLargeError{Limit: h.max, Prefix: prefix}
	}
	if cap(h.buf) < length {
		h.buf = make([]byte, length)
	}
	h.buf = h.buf[:length]
	if _, err := io.ReadFull(h.br, h.buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return h.buf, nil
}

type headerWriter struct {
	w   io.Writer
	buf []byte
}

func (h *headerWriter) Write(msg []byte) error {
	h.buf = append(h.buf[:0], "Content-Length: "...)
	h.buf = strconv.AppendInt(h.buf, int64(len(msg)), 10)
	h.buf = append(h.buf, "\r\n\r\n"...)
	h.buf = append(h.buf, msg...)
	_, err := h.w.Write(h.buf)
	if cap(h.buf) > 1<<20 {
		h.buf = nil
	}
	return err
}
