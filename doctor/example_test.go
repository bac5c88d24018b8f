package doctor_test

import (
	"context"
	"fmt"

	"yolop.dev/doctor"
)

// An extension's go test runs the doctor over the package directory and
// fails on any failed check. Beside plugin.json, with the server built
// into bin/ first, the test reads:
//
//	func TestDoctor(t *testing.T) {
//		rep, err := doctor.Run(t.Context(), ".", doctor.Options{})
//		if err != nil {
//			t.Fatal(err) // no valid manifest, or nothing to run
//		}
//		for _, c := range rep.Checks {
//			if c.Status == doctor.Fail {
//				t.Errorf("%s %s: %s", c.Group, c.Name, c.Detail)
//			}
//		}
//	}
//
// Here the package is the echo example, its server built by go build.
func ExampleRun() {
	dir, err := echoPackage() // plugin.json, and the server in bin/
	if err != nil {
		fmt.Println(err)
		return
	}
	rep, err := doctor.Run(context.Background(), dir, doctor.Options{})
	if err != nil {
		fmt.Println("doctor could not run:", err)
		return
	}
	for _, c := range rep.Checks {
		if c.Status == doctor.Fail {
			fmt.Printf("FAIL %s %s: %s\n", c.Group, c.Name, c.Detail)
		}
	}
	fmt.Printf("%s %s: ok %v\n", rep.Extension, rep.Version, rep.OK())
	// Output: echo 0.1.0: ok true
}
