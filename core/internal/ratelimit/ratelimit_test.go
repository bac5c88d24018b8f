package ratelimit

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestBucket runs a bucket on the fake clock: the burst passes, the rest
// is counted, and each interval lets one more line through.
func TestBucket(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := New(3, time.Second)
		allowed := 0
		for range 10 {
			if b.Allow(time.Now()) {
				allowed++
			}
		}
		if allowed != 3 || b.TakeSuppressed() != 7 || b.TakeSuppressed() != 0 {
			t.Fatalf("a burst of 3 let %d of 10 through", allowed)
		}
		time.Sleep(time.Second)
		if !b.Allow(time.Now()) || b.Allow(time.Now()) {
			t.Fatal("one interval must let exactly one more line through")
		}
		time.Sleep(time.Hour)
		allowed = 0
		for range 10 {
			if b.Allow(time.Now()) {
				allowed++
			}
		}
		if allowed != 3 || b.TakeSuppressed() != 8 {
			t.Fatalf("after a long pause %d lines passed, want the burst of 3 (the bucket holds no more)", allowed)
		}
	})
}
