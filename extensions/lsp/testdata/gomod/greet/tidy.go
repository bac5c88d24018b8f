package greet

import (
	"os"
	"strings"
)

// Tidy trims s. The os import is unused on purpose: organize imports
// removes it.
func Tidy(s string) string { return strings.TrimSpace(s) }
