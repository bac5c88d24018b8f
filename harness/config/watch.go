package config

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watch calls onChange whenever one of the named files in dir is written or
// replaced (settings.toml and connections.toml are replaced by rename, so
// the directory is watched), at most once per quiet period of debounce
// (zero means 100ms), serially, until stop is called. A missing dir is
// watched from nothing: stop is a no-op.
func Watch(dir string, names []string, debounce time.Duration, onChange func(ctx context.Context)) (stop func(), err error) {
	if debounce <= 0 {
		debounce = 100 * time.Millisecond
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return func() {}, nil
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watching %s for config changes: %w", dir, err)
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return nil, fmt.Errorf("watching %s for config changes: %w", dir, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		timer := time.NewTimer(time.Hour)
		timer.Stop()
		defer timer.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if slices.Contains(names, filepath.Base(ev.Name)) && ev.Op&(fsnotify.Create|fsnotify.Write|fsnotify.Rename|fsnotify.Remove) != 0 {
					timer.Reset(debounce)
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
			case <-timer.C:
				onChange(ctx)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			w.Close()
			wg.Wait()
		})
	}, nil
}
