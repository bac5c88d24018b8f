package greet

import "strings"

// Shout greets name loudly.
func Shout(name string) string {
	return strings.ToUpper(Hello(name))
}
