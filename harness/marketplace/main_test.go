package marketplace

import (
	"testing"

	"go.uber.org/goleak"

	"yolop.dev/transport/stdio/confine"
)

func TestMain(m *testing.M) {
	confine.Init() // the launcher of the sandboxed servers these tests start
	goleak.VerifyTestMain(m)
}
