package jsonrpc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// chunkReader hands out its chunks one Read at a time, as a pipe hands
// out what its writer wrote, and counts the reads.
type chunkReader struct {
	chunks [][]byte
	reads  int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	c.reads++
	n := copy(p, c.chunks[0])
	if c.chunks[0] = c.chunks[0][n:]; len(c.chunks[0]) == 0 {
		c.chunks = c.chunks[1:]
	}
	return n, nil
}

func newTestLineReader(r io.Reader) *lineReader {
	return NDJSON.NewReader(r, 0).(*lineReader)
}

func readAll(t *testing.T, lr *lineReader) []string {
	t.Helper()
	var got []string
	for {
		line, err := lr.Read()
		if errors.Is(err, io.EOF) {
			return got
		}
		if err != nil {
			t.Fatalf("Read after %d lines: %v", len(got), err)
		}
		got = append(got, string(line))
	}
}

func TestLineReaderKeepsSmallBufferForShortLines(t *testing.T) {
	cr := &chunkReader{}
	var want []string
	for i := range 50 {
		line := fmt.Sprintf(`{"id":%d,"pad":%q}`, i, strings.Repeat("x", 200))
		want = append(want, line)
		cr.chunks = append(cr.chunks, []byte(line+"\n"))
	}
	lr := newTestLineReader(cr)
	if got := readAll(t, lr); !slices.Equal(got, want) {
		t.Fatalf("lines differ: got %d, want %d", len(got), len(want))
	}
	if got := lr.br.Size(); got != smallReadBuffer {
		t.Fatalf("buffer is %d bytes after short lines, want the small %d", got, smallReadBuffer)
	}
}

func TestLineReaderGrowsForALongLine(t *testing.T) {
	long := `{"result":"` + strings.Repeat("y", 200<<10) + `"}`
	stream := long + "\n" + `{"id":2}` + "\n"
	cr := &chunkReader{chunks: [][]byte{[]byte(stream)}}
	lr := newTestLineReader(cr)
	got := readAll(t, lr)
	if len(got) != 2 || got[0] != long || got[1] != `{"id":2}` {
		t.Fatalf("got %d lines (first %d bytes), want the long line and {\"id\":2}", len(got), len(got[0]))
	}
	if got := lr.br.Size(); got != largeReadBuffer {
		t.Fatalf("buffer is %d bytes after a %d-byte line, want the large %d", got, len(long), largeReadBuffer)
	}
	// One small read, then large ones: a reader stuck at 4 KiB would take
	// over fifty.
	if want := 2 + len(stream)/largeReadBuffer + 1; cr.reads > want {
		t.Fatalf("%d reads for a %d-byte stream, want at most %d", cr.reads, len(stream), want)
	}
}

// TestLineReaderGrowsWithoutLosingBytes feeds random lines in random
// chunks, so growth happens mid-line, at line ends and after bursts, and
// checks every line arrives whole and in order.
func TestLineReaderGrowsWithoutLosingBytes(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 1))
		var want []string
		var stream bytes.Buffer
		for i := range 1 + rng.IntN(80) {
			n := rng.IntN(300)
			if rng.IntN(10) == 0 {
				n = rng.IntN(20 << 10)
			}
			line := fmt.Sprintf(`{"id":%d,"p":"%s"}`, i, strings.Repeat(string(rune('a'+i%26)), n))
			want = append(want, line)
			stream.WriteString(line + "\n")
		}
		cr := &chunkReader{}
		for b := stream.Bytes(); len(b) > 0; {
			n := min(len(b), 1+rng.IntN(12<<10))
			cr.chunks = append(cr.chunks, b[:n])
			b = b[n:]
		}
		lr := newTestLineReader(cr)
		if got := readAll(t, lr); !slices.Equal(got, want) {
			t.Fatalf("seed %d: lines differ (got %d, want %d)", seed, len(got), len(want))
		}
	}
}

// TestLineReaderGrowsAfterABurst: a read that fills the small buffer
// means more was waiting (calls answered faster than read), and the
// reader moves to the large buffer once it has caught up.
func TestLineReaderGrowsAfterABurst(t *testing.T) {
	var burst bytes.Buffer
	var want []string
	for i := 0; burst.Len() < 3*smallReadBuffer; i++ {
		line := fmt.Sprintf(`{"id":%d,"pad":%q}`, i, strings.Repeat("z", 90))
		want = append(want, line)
		burst.WriteString(line + "\n")
	}
	cr := &chunkReader{chunks: [][]byte{burst.Bytes(), []byte(`{"id":"last"}` + "\n")}}
	want = append(want, `{"id":"last"}`)
	lr := newTestLineReader(cr)
	if got := readAll(t, lr); !slices.Equal(got, want) {
		t.Fatalf("lines differ: got %d, want %d", len(got), len(want))
	}
	if got := lr.br.Size(); got != largeReadBuffer {
		t.Fatalf("buffer is %d bytes after a %d-byte burst, want the large %d", got, burst.Len(), largeReadBuffer)
	}
}
