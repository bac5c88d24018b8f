//go:build race

package lab_test

// raceEnabled: the race detector makes wazero's compile of the echo module
// take minutes, so TestWASMSide runs without it.
const raceEnabled = true
