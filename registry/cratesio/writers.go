package cratesio

import (
	"fmt"
	"hash/maphash"
	"io/fs"
	"runtime"
	"sync"
)

// Small files are created by a few writer goroutines while the reading
// goroutine decompresses and checks the next entries. Creating a file is
// kernel work (openat with O_CREAT costs tens of microseconds on a
// journalled filesystem, far more than writing a few hundred bytes), so on
// more than one core the creates overlap. Each file goes to the writer
// with the shortest queue. (Sending a directory's files all to one writer
// left the others idle: an archive lists a directory's files together, so
// the reader waited on that one writer's full queue.) Order between files
// does not matter: every path was checked to be new before it is queued.
const (
	// maxParallelFile is the largest file handed to a writer; larger ones
	// are written by the reading goroutine, which streams them.
	maxParallelFile = 64 << 10
	// writerQueue is how many files may wait per writer, so memory stays
	// bounded (writerQueue × maxParallelFile per writer).
	writerQueue = 32
)

// numWriters is how many writer goroutines an extraction starts: none on
// one core (the reading goroutine writes), else one per core up to four.
// A variable so that benchmarks can compare with the serial path.
var numWriters = func() int {
	n := runtime.GOMAXPROCS(0)
	if n < 2 {
		return 0
	}
	return min(n, 4)
}

type writeJob struct {
	dir  *dirHandle
	name string // one path component
	rel  string // for errors
	perm fs.FileMode
	data []byte
}

// writers is a pool of file-creating goroutines. The first error stops the
// extraction: Err reports it to the reading goroutine, and the remaining
// queued files are dropped (the staging tree is removed anyway).
type writers struct {
	queues []chan writeJob
	next   int // where submit's search for the shortest queue starts
	seed   maphash.Seed
	wg     sync.WaitGroup // the writer goroutines
	inFly  sync.WaitGroup // queued and running jobs
	bufs   sync.Pool

	mu  sync.Mutex
	err error
}

func newWriters(n int) *writers {
	w := &writers{seed: maphash.MakeSeed()}
	w.bufs.New = func() any { b := make([]byte, 0, maxParallelFile); return &b }
	for range n {
		q := make(chan writeJob, writerQueue)
		w.queues = append(w.queues, q)
		w.wg.Add(1)
		go w.run(q)
	}
	return w
}

func (w *writers) run(q chan writeJob) {
	defer w.wg.Done()
	for j := range q {
		if w.Err() == nil {
			if err := createFile(j.dir, j.name, j.perm, j.data); err != nil {
				w.fail(fmt.Errorf("writing %s: %w", j.rel, err))
			}
		}
		b := j.data[:0]
		w.bufs.Put(&b)
		w.inFly.Done()
	}
}

func (w *writers) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
}

// Err returns the first error a writer met, if any.
func (w *writers) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// buffer returns a buffer of n bytes (n ≤ maxParallelFile) for a job.
func (w *writers) buffer(n int) []byte {
	return (*w.bufs.Get().(*[]byte))[:n]
}

// submit queues the creation of name in dir with data, which must come
// from buffer and is owned by the pool from now on. It goes to the
// writer with the fewest queued files (with byDirectory set, the one
// dirKey hashes to).
func (w *writers) submit(dirKey string, j writeJob) {
	w.inFly.Add(1)
	if byDirectory {
		w.queues[maphash.String(w.seed, dirKey)%uint64(len(w.queues))] <- j
		return
	}
	best := w.next % len(w.queues)
	w.next++
	for k := range w.queues {
		if q := w.queues[(best+k)%len(w.queues)]; len(q) < len(w.queues[best]) {
			best = (best + k) % len(w.queues)
		}
	}
	w.queues[best] <- j
}

// byDirectory sends all of a directory's files to one writer, as
// extraction did before; the benchmark compares the two in one run.
var byDirectory = false

// drain waits until every queued file is written (before directory
// handles are closed, and at the end) and returns the first error.
func (w *writers) drain() error {
	w.inFly.Wait()
	return w.Err()
}

// close stops the writers once their queues are empty.
func (w *writers) close() {
	for _, q := range w.queues {
		close(q)
	}
	w.wg.Wait()
}
