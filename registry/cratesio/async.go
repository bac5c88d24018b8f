package cratesio

import (
	"io"
	"sync"
)

// asyncReader reads ahead from r on its own goroutine into a fixed pool of
// buffers, so decompression overlaps with writing files (GNU tar gets the
// same overlap by running gzip as a separate process). Memory is bounded
// by the pool. Close stops the goroutine and waits for it.
type asyncReader struct {
	full chan chunk
	free chan []byte
	done chan struct{}
	wg   sync.WaitGroup
	once sync.Once

	size        int
	cur, curBuf []byte
	err         error
}

type chunk struct {
	b   []byte
	err error
}

func newAsyncReader(r io.Reader, size, depth int) *asyncReader {
	a := &asyncReader{
		full: make(chan chunk, depth),
		free: make(chan []byte, depth+1),
		done: make(chan struct{}),
	}
	for range depth + 1 {
		a.free <- nil // allocated on first use: a small archive needs one
	}
	a.size = size
	a.wg.Add(1)
	go a.fill(r)
	return a
}

func (a *asyncReader) fill(r io.Reader) {
	defer a.wg.Done()
	for {
		var buf []byte
		select {
		case buf = <-a.free:
		case <-a.done:
			return
		}
		if buf == nil {
			buf = make([]byte, a.size)
		}
		n := 0
		var err error
		for n < len(buf) && err == nil {
			var m int
			m, err = r.Read(buf[n:])
			n += m
		}
		if n > 0 {
			select {
			case a.full <- chunk{b: buf[:n]}:
			case <-a.done:
				return
			}
		} else {
			a.free <- buf
		}
		if err != nil {
			select {
			case a.full <- chunk{err: err}:
			case <-a.done:
			}
			return
		}
	}
}

func (a *asyncReader) Read(p []byte) (int, error) {
	for len(a.cur) == 0 {
		if a.err != nil {
			return 0, a.err
		}
		if a.curBuf != nil {
			a.free <- a.curBuf[:cap(a.curBuf)]
			a.curBuf = nil
		}
		c := <-a.full
		if c.err != nil {
			a.err = c.err
			continue
		}
		a.cur, a.curBuf = c.b, c.b
	}
	n := copy(p, a.cur)
	a.cur = a.cur[n:]
	return n, nil
}

func (a *asyncReader) Close() {
	a.once.Do(func() { close(a.done) })
	a.wg.Wait()
}
