package doctor_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The doctor imports no front-end and nothing of the harness: an author's
// go test pulls in core, packaging and the stdio transport only.
func TestNoFrontEndDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "yolop.dev/doctor/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, bad := range []string{"yolop.dev/cmd/", "yolop.dev/harness", "github.com/spf13/cobra", "github.com/knadh/koanf"} {
			if strings.HasPrefix(dep, bad) {
				t.Errorf("doctor depends on %s", dep)
			}
		}
	}
}
