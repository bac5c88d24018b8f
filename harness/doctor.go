package harness

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"yolop.dev/core/host"
	"yolop.dev/doctor"
	"yolop.dev/packaging"
)

// doctorRuns numbers the doctor runs of this process, for their session
// ids.
var doctorRuns atomic.Int64

// Doctor runs the doctor against target, as [Harness.Target] takes it:
// an installed extension's name or a package directory. o.Transport nil
// means h's, so a server of any transport this binary has is graded as a
// session would start it; an empty o.SessionID means a new
// "doctor-<time>-<n>" one. The report names the extension; its OK says
// whether every check passed.
func (h *Harness) Doctor(ctx context.Context, target string, o doctor.Options) (*doctor.Report, error) {
	m, g, err := h.Target(ctx, target)
	if err != nil {
		return nil, fmt.Errorf("doctor: %w", err)
	}
	return h.doctor(ctx, m, g, o)
}

// DoctorInstalled is [Harness.Doctor] of the installed extension name,
// never a directory of that name: the extension is verified against
// extensions.lock and run with the grant a session would run it with.
func (h *Harness) DoctorInstalled(ctx context.Context, name string, o doctor.Options) (*doctor.Report, error) {
	m, g, err := h.InstalledGrant(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("doctor: %w (to check a package directory, pass its path)", err)
	}
	return h.doctor(ctx, m, g, o)
}

func (h *Harness) doctor(ctx context.Context, m *packaging.Manifest, g host.Grant, o doctor.Options) (*doctor.Report, error) {
	if o.Transport == nil {
		o.Transport = h.Transport()
	}
	if o.SessionID == "" {
		o.SessionID = fmt.Sprintf("doctor-%d-%d", time.Now().UnixNano(), doctorRuns.Add(1))
	}
	return doctor.RunGrant(ctx, m, g, o)
}
