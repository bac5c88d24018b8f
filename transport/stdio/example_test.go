//go:build linux

package stdio_test

import (
	"context"
	"fmt"
	"io"
	"time"

	"yolop.dev/core"
	"yolop.dev/transport/stdio"
)

// Start a server, read its message stream, and stop it.
func ExampleTransport_Start() {
	tr := stdio.New(stdio.Options{}) // a null logger, the default env allowlist
	inst, err := tr.Start(context.Background(), core.ServerSpec{
		Name:    "greeter",
		Command: "sh", // no PackageDir: resolved from the scrubbed PATH
		Args:    []string{"-c", `echo "hello, $GREETING"`},
		Env:     map[string]string{"GREETING": "world"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, _ := io.ReadAll(inst.Stdout())
	fmt.Print(string(out))
	// The owner always stops its instances.
	fmt.Println("stop:", inst.Stop(2*time.Second))
	// Output:
	// hello, world
	// stop: <nil>
}
