package packaging

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain re-executes the test binary as a helper process when
// PACKAGING_TEST_HELPER is set (see helper_test.go), so crash and race tests
// drive real processes without prebuilt fixtures.
func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(runHelper())
	}
	goleak.VerifyTestMain(m)
}
