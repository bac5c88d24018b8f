//go:build !unix

package git

// oNoFollow is zero where the platform has no O_NOFOLLOW; the exporter
// still creates every file with O_EXCL in directories it made itself.
const oNoFollow = 0
