package main

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"yolop.dev/core/yep"
)

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, errOut, code := cli(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: %d %s", args, code, errOut)
		}
		mustContain(t, strings.Join(args, " "), out, "yolop "+version, "commit:", runtime.Version(), "YEP "+yep.ProtocolVersion, "speaks major [1]")
	}
	out, _, code := cli(t, "", "version", "--json")
	var b buildInfo
	if err := json.Unmarshal([]byte(out), &b); err != nil || code != 0 {
		t.Fatalf("version --json = %s (%v)", out, err)
	}
	if b.Version != version || b.Protocol != yep.ProtocolVersion || len(b.ProtocolMajors) != 1 || b.ProtocolMajors[0] != yep.ProtocolMajor || b.Go != runtime.Version() {
		t.Fatalf("version --json = %+v", b)
	}
}
