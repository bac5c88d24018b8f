package typed_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind: every served
// connection ends with its test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
