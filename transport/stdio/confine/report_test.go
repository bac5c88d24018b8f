package confine

import (
	"testing"

	"yolop.dev/core"
)

// TestReportStrings: the status line never claims more than the ABI
// enforces.
func TestReportStrings(t *testing.T) {
	c := &core.Confinement{}
	cases := []struct {
		goos string
		abi  int
		c    *core.Confinement
		want string
		full bool
	}{
		{"linux", 0, c, "unsandboxed (kernel has no Landlock)", false},
		{"linux", 3, c, "partly sandboxed: TCP rules not enforced (Landlock ABI 3)", false},
		{"linux", 2, c, "partly sandboxed: truncation not restricted, TCP rules not enforced (Landlock ABI 2)", false},
		{"linux", 5, c, "sandboxed (Landlock ABI 5; signals and abstract unix sockets not scoped)", true},
		{"linux", 7, c, "sandboxed (Landlock ABI 7)", true},
		{"darwin", 7, c, "unsandboxed (no OS sandbox on darwin)", false},
		{"linux", 7, nil, "unsandboxed (no sandbox declared)", false},
	}
	// As on amd64 and arm64, where the launcher fails MPTCP sockets.
	prev := mptcpFiltered
	mptcpFiltered = true
	defer func() { mptcpFiltered = prev }()
	for _, tc := range cases {
		r := reportFor(tc.c, tc.goos, tc.abi)
		if got := r.String(); got != tc.want {
			t.Errorf("%s ABI %d: String() = %q, want %q", tc.goos, tc.abi, got, tc.want)
		}
		if r.Full() != tc.full {
			t.Errorf("%s ABI %d: Full() = %v, want %v", tc.goos, tc.abi, r.Full(), tc.full)
		}
	}
}

// TestCheckFollowsTheABIHook: Check reads the (overridable) kernel ABI.
func TestCheckFollowsTheABIHook(t *testing.T) {
	defer SetKernelABIForTesting(3)()
	if got := Check(&core.Confinement{}).String(); got != "partly sandboxed: TCP rules not enforced (Landlock ABI 3)" {
		t.Fatalf("Check at ABI 3 = %q", got)
	}
}

// TestReportNamesMissingMPTCPFilter: where the launcher cannot fail MPTCP
// sockets, the report says the TCP rules can be got around.
func TestReportNamesMissingMPTCPFilter(t *testing.T) {
	prev := mptcpFiltered
	mptcpFiltered = false
	defer func() { mptcpFiltered = prev }()
	if got := reportFor(&core.Confinement{}, "linux", 7).String(); got != "partly sandboxed: MPTCP sockets not blocked (Landlock ABI 7)" {
		t.Fatalf("String() = %q", got)
	}
}
