package wasm

import (
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"
)

// TestSleepCutShortByKill checks the guest's clock sleep on a fake clock:
// it lasts as long as asked, and a kill ends it at once.
func TestSleepCutShortByKill(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &proc{wake: make(chan struct{})}
		t0 := time.Now()
		p.sleep(int64(3 * time.Second))
		if d := time.Since(t0); d != 3*time.Second {
			t.Errorf("sleep(3s) took %v on the fake clock", d)
		}

		done := make(chan struct{})
		go func() {
			defer close(done)
			p.sleep(int64(time.Hour))
		}()
		synctest.Wait() // the sleeper is blocked
		close(p.wake)
		<-done
		if d := time.Since(t0); d != 3*time.Second {
			t.Errorf("a killed sleep took %v more, want none", d-3*time.Second)
		}
	})
}

// TestWaitDoneGrace checks Stop's wait on a fake clock: it gives up after
// the grace, and returns as soon as the guest ends within it.
func TestWaitDoneGrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := &proc{done: make(chan struct{})}
		t0 := time.Now()
		if p.waitDone(2 * time.Second) {
			t.Error("waitDone reported an end that did not happen")
		}
		if d := time.Since(t0); d != 2*time.Second {
			t.Errorf("waitDone(2s) gave up after %v", d)
		}
		if p.waitDone(0) {
			t.Error("waitDone(0) reported an end that did not happen")
		}
		go func() {
			time.Sleep(500 * time.Millisecond)
			close(p.done)
		}()
		t1 := time.Now()
		if !p.waitDone(time.Minute) {
			t.Error("waitDone missed the end")
		}
		if d := time.Since(t1); d != 500*time.Millisecond {
			t.Errorf("waitDone returned %v after the wait began, want at the end (500ms)", d)
		}
	})
}

// TestMemoryCapAllocator checks the allocator alone: grows up to the cap
// succeed and keep the contents, the first one past it is refused and
// remembered, and the initial allocation is never refused.
func TestMemoryCapAllocator(t *testing.T) {
	c := &memoryCap{limit: 4 << 16}
	m := c.Allocate(0, 1<<32)
	b := m.Reallocate(1 << 16)
	if len(b) != 1<<16 {
		t.Fatalf("initial allocation: %d bytes", len(b))
	}
	b[100] = 7
	if b = m.Reallocate(3 << 16); len(b) != 3<<16 || b[100] != 7 {
		t.Fatalf("grow within the cap: %d bytes, contents kept %v", len(b), b[100] == 7)
	}
	if cap(b) > 4<<16 {
		t.Errorf("capacity %d reserved past the cap", cap(b))
	}
	if b := m.Reallocate(5 << 16); b != nil {
		t.Errorf("a grow past the cap returned %d bytes", len(b))
	}
	if got := c.refused.Load(); got != 5<<16 {
		t.Errorf("refused = %d, want the size asked for", got)
	}
	m.Reallocate(6 << 16)
	if got := c.refused.Load(); got != 5<<16 {
		t.Errorf("refused = %d after a second refusal, want the first", got)
	}

	big := &memoryCap{limit: 1 << 16}
	if b := big.Allocate(0, 1<<32).Reallocate(2 << 16); len(b) != 2<<16 || big.refused.Load() == 0 {
		t.Errorf("an initial allocation past the cap: %d bytes, refusal recorded %v; want it made and recorded", len(b), big.refused.Load() != 0)
	}
}

// FuzzVerifySums feeds arbitrary sums files to the cache check: it must
// never accept them for an entry whose file they do not authenticate, and
// never panic.
func FuzzVerifySums(f *testing.F) {
	for _, seed := range []string{
		"",
		"\n",
		"deadbeef wazero/wazero-v1-amd64-linux/0011",
		"no-space-here",
		" wazero/x",
		"00 wazero/x\n00 wazero/x\n",
		"\x00\xff garbage \r\n",
	} {
		f.Add([]byte(seed))
	}
	dir := f.TempDir()
	e := &entry{c: &diskCache{dir: dir, key: make([]byte, 32), log: hclog.NewNullLogger()}, dir: filepath.Join(dir, "e")}
	code := filepath.Join(e.wazeroDir(), "wazero-v1-amd64-linux")
	if err := os.MkdirAll(code, 0o700); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(code, "0011"), []byte("native code"), 0o600); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, sums []byte) {
		if err := os.WriteFile(e.sumsPath(), sums, 0o600); err != nil {
			t.Fatal(err)
		}
		ok, reason := e.verify()
		want, _ := e.mac("wazero/wazero-v1-amd64-linux/0011")
		if ok && string(sums) != want+" wazero/wazero-v1-amd64-linux/0011\n" && string(sums) != want+" wazero/wazero-v1-amd64-linux/0011" {
			t.Errorf("sums %q accepted", sums)
		}
		if !ok && reason == "" {
			t.Errorf("sums %q refused without a reason", sums)
		}
	})
}
