package cratesio

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWritersReportTheFirstError: a file a writer cannot create fails the
// extraction with an error naming it, later jobs are dropped, and drain
// returns once every queued job is accounted for.
func TestWritersReportTheFirstError(t *testing.T) {
	root, err := os.OpenRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	good, err := root.Open(".")
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	bad, err := root.Open(".")
	if err != nil {
		t.Fatal(err)
	}
	bad.Close() // its descriptor is gone: creating in it fails
	w := newWriters(2)
	defer w.close()
	submit := func(h *os.File, name string) {
		data := w.buffer(5)
		copy(data, "hello")
		w.submit(name, writeJob{dir: &dirHandle{root: root, dir: h}, name: name, rel: "src/" + name, perm: 0o644, data: data})
	}
	submit(good, "a.rs")
	// Written before anything fails (the writers run in parallel, and a
	// job queued after a failure is dropped).
	if err := w.drain(); err != nil {
		t.Fatal(err)
	}
	submit(bad, "b.rs")
	err = w.drain()
	if err == nil || !strings.Contains(err.Error(), "writing src/b.rs") {
		t.Fatalf("drain = %v, want the failure naming src/b.rs", err)
	}
	if got, err := os.ReadFile(filepath.Join(root.Name(), "a.rs")); err != nil || !bytes.Equal(got, []byte("hello")) {
		t.Errorf("a.rs = %q, %v; want hello", got, err)
	}
	submit(good, "c.rs") // after the failure: dropped, not written
	if err := w.drain(); err == nil {
		t.Error("the first error was forgotten")
	}
	if _, err := os.Stat(filepath.Join(root.Name(), "c.rs")); !os.IsNotExist(err) {
		t.Errorf("a job after the failure was written: %v", err)
	}
}

// TestUnpackSerialAndParallelAgree: the writer pool and the serial path
// produce the same tree, byte for byte and mode for mode, for a crate of
// many small files in many directories with some larger ones.
func TestUnpackSerialAndParallelAgree(t *testing.T) {
	files := map[string]string{}
	for i := range 300 {
		body := strings.Repeat("x", i*7)
		if i%50 == 0 {
			body = strings.Repeat("big ", 40_000) // over maxParallelFile
		}
		files[filepath.Join("src", "d"+itoa(int64(i%13)), "f"+itoa(int64(i))+".rs")] = body
	}
	crate := buildCrate(t, "many", "1.0.0", files)
	parallel := numWriters
	defer func() { numWriters = parallel }()
	var trees [][]string
	for _, n := range []int{0, 3} {
		numWriters = func() int { return n }
		dest := filepath.Join(t.TempDir(), "out")
		if err := Unpack(bytes.NewReader(crate), int64(len(crate)), dest, UnpackOptions{Prefix: "many-1.0.0/"}); err != nil {
			t.Fatalf("writers=%d: %v", n, err)
		}
		for name, body := range files {
			got, err := os.ReadFile(filepath.Join(dest, name))
			if err != nil || string(got) != body {
				t.Fatalf("writers=%d: %s: %d bytes, %v; want %d bytes", n, name, len(got), err, len(body))
			}
		}
		trees = append(trees, snapshot(t, dest))
	}
	if strings.Join(trees[0], "\n") != strings.Join(trees[1], "\n") {
		t.Errorf("serial and parallel trees differ:\n%v\n%v", trees[0], trees[1])
	}
}

// TestSubmitSpreadsADirectorysFiles: the files of one directory, listed
// together as archives list them, go to the writer with the shortest
// queue rather than all to one (which left the other writers idle while
// the reader waited on that one's full queue).
func TestSubmitSpreadsADirectorysFiles(t *testing.T) {
	w := &writers{} // no writer goroutines: what is queued stays queued
	for range 4 {
		w.queues = append(w.queues, make(chan writeJob, writerQueue))
	}
	for i := range 8 {
		w.submit("src/d0", writeJob{name: itoa(int64(i))})
	}
	for k, q := range w.queues {
		if len(q) != 2 {
			t.Fatalf("writer %d has %d of one directory's 8 files queued, want 2 each", k, len(q))
		}
	}
	// Writer 2 catches up: the next files go to it until it is level.
	<-w.queues[2]
	<-w.queues[2]
	w.submit("src/d1", writeJob{name: "x"})
	w.submit("src/d2", writeJob{name: "y"})
	if len(w.queues[2]) != 2 {
		t.Fatalf("the writer with the empty queue got %d of the next 2 files, want both", len(w.queues[2]))
	}
}
