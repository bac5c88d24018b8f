// Command confguest runs the shared transport conformance suite's
// behaviours (yolop.dev/core/transporttest/conformance) as a wasip1
// guest: its first argument names the behaviour. The transport's tests
// build it and run the suite against it.
package main

import (
	"os"

	"yolop.dev/core/transporttest/conformance"
)

func main() {
	if len(os.Args) < 2 {
		os.Stderr.WriteString("confguest: which behaviour?\n")
		os.Exit(2)
	}
	conformance.Main(os.Args[1])
}
