// Package greet builds greetings.
package greet

import "strings"

// Hello returns a greeting for name.
func Hello(name string) string {
	return "Hello, " + strings.TrimSpace(name) + "!"
}

// A Greeter greets with a fixed prefix.
type Greeter struct {
	Prefix string
}

// Greet greets name with the greeter's prefix.
func (g Greeter) Greet(name string) string {
	return g.Prefix + Hello(name)
}
