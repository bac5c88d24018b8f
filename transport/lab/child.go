package lab

import (
	"runtime"
	"sync"
)

// startChild runs start, which starts one server process with
// childAttr's attributes, so that the server dies with the lab as
// transport/stdio's servers die with their host: when the lab is killed
// (a closed pipe, a second Ctrl-C), the kernel sends the server SIGKILL
// (Linux's parent-death signal). That signal fires when the *thread* that
// forked the child exits (prctl(2); golang/go#27505), and the Go runtime
// ends a thread when a goroutine locked to it exits, as transport/stdio's
// do; so start runs on a goroutine locked to its thread, which stays until
// release is called, after the server has ended.
func startChild(start func() error) (release func(), err error) {
	if !lockThread {
		return func() {}, start()
	}
	errc := make(chan error, 1)
	stop := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		errc <- start()
		<-stop
	}()
	var once sync.Once
	return func() { once.Do(func() { close(stop) }) }, <-errc
}
