// Package internal holds helpers shared by the yolop.dev modules. Its
// packages are importable from any yolop.dev/... module and from nowhere
// else: they are not part of any public API. It depends on the standard
// library, go-hclog and golang.org/x/time (stderrpump's logger and rate
// limit) only.
package internal
