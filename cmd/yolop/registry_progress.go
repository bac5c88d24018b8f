package main

import (
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"yolop.dev/harness/fetch"
)

// downloadProgress draws a download progress bar on stderr when stderr is
// a terminal; otherwise its methods do nothing, so scripts and logs see no
// control characters.
type downloadProgress struct {
	a    *app
	desc string
	bar  *progressbar.ProgressBar
}

// progress returns a progress bar for one download described by desc
// (a fetch.Crate Progress), or nil unless stderr is a terminal.
func (a *app) progress(desc string) fetch.Progress {
	if !term.IsTerminal(int(os.Stderr.Fd())) {
		return nil
	}
	return &downloadProgress{a: a, desc: desc}
}

// Update draws done bytes of total (-1 = unknown).
func (p *downloadProgress) Update(done, total int64) {
	if p == nil {
		return
	}
	if p.bar == nil {
		p.bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(p.a.stderr),
			progressbar.OptionSetDescription("downloading "+p.desc),
			progressbar.OptionShowBytes(true),
			progressbar.OptionShowTotalBytes(true),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionSetRenderBlankState(true), // drawn even when one read finishes the download
			progressbar.OptionClearOnFinish(),
		)
	}
	_ = p.bar.Set64(done)
}

// Finish clears a bar that did not reach its end (a failed download); a
// finished one has already cleared itself.
func (p *downloadProgress) Finish() {
	if p == nil || p.bar == nil || p.bar.IsFinished() {
		return
	}
	_ = p.bar.Clear()
}
