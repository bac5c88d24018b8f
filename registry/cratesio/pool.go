package cratesio

import (
	"fmt"
	"io/fs"
	"os"
	"sync"
)

// poolFileMax is the largest file handed to the write pool; bigger files
// are streamed by the reading goroutine. With the queue depth this bounds
// the memory in flight to about (queue+workers) × poolFileMax.
const poolFileMax = 1 << 20

// A writeJob creates one small file (O_EXCL, relative to its directory's
// root) and writes data to it.
type writeJob struct {
	root *os.Root
	name string
	rel  string
	perm fs.FileMode
	data []byte
}

// writePool creates files on a few goroutines: file creation dominates
// unpacking many small files, and it overlaps well across directories.
// The first error stops the pool; wait returns it after every worker has
// exited, and may be called again (it restarts the workers for more jobs).
type writePool struct {
	n    int
	jobs chan writeJob
	wg   sync.WaitGroup

	mu  sync.Mutex
	err error
}

func newWritePool(n int) *writePool {
	p := &writePool{n: n}
	p.start()
	return p
}

func (p *writePool) start() {
	p.jobs = make(chan writeJob, 16)
	for range p.n {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			for j := range p.jobs {
				if p.failed() {
					continue // drain
				}
				if err := j.write(); err != nil {
					p.mu.Lock()
					if p.err == nil {
						p.err = err
					}
					p.mu.Unlock()
				}
			}
		}()
	}
}

func (p *writePool) failed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err != nil
}

// submit queues j, or returns the pool's first error.
func (p *writePool) submit(j writeJob) error {
	p.mu.Lock()
	err := p.err
	p.mu.Unlock()
	if err != nil {
		return err
	}
	if p.jobs == nil {
		p.start()
	}
	p.jobs <- j
	return nil
}

// wait finishes every queued job, stops the workers and returns the first
// error.
func (p *writePool) wait() error {
	if p.jobs != nil {
		close(p.jobs)
		p.wg.Wait()
		p.jobs = nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

func (j writeJob) write() error {
	f, err := j.root.OpenFile(j.name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, j.perm)
	if err != nil {
		return fmt.Errorf("creating %s: %w", j.rel, err)
	}
	_, err = f.Write(j.data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", j.rel, err)
	}
	return nil
}
