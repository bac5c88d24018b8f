package wasm

import (
	"sync/atomic"

	"github.com/tetratelabs/wazero/experimental"
)

// A memoryCap backs the linear memories of one instance and refuses to
// grow them past limit bytes, remembering the first refused size so the
// instance's error can name the cap. The runtime's own limit (4 GiB for a
// module that declares no maximum) stays above it, so every grow past the
// cap reaches Reallocate and is seen.
type memoryCap struct {
	limit   uint64
	refused atomic.Uint64 // the first refused size, 0 if none
}

// Allocate implements [experimental.MemoryAllocator].
func (c *memoryCap) Allocate(_, max uint64) experimental.LinearMemory {
	return &cappedMemory{c: c, limit: min(c.limit, max)}
}

type cappedMemory struct {
	c     *memoryCap
	limit uint64
	buf   []byte
}

// Reallocate implements [experimental.LinearMemory]. A nil result makes
// memory.grow return -1 to the guest. The first allocation (the module's
// declared minimum) is never refused, because the runtime cannot fail it
// gracefully; Start checks the minimum against the cap before it
// instantiates and again after.
func (m *cappedMemory) Reallocate(size uint64) []byte {
	if size > m.limit {
		m.c.refused.CompareAndSwap(0, size)
		if m.buf != nil {
			return nil
		}
	}
	if size <= uint64(cap(m.buf)) {
		m.buf = m.buf[:size]
		return m.buf
	}
	// Grow geometrically, but never reserve past the cap.
	c := max(size, min(2*uint64(cap(m.buf)), m.limit))
	nb := make([]byte, size, c)
	copy(nb, m.buf)
	m.buf = nb
	return nb
}

// Free implements [experimental.LinearMemory].
func (m *cappedMemory) Free() { m.buf = nil }
