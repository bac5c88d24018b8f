// Package uni has identifiers after multi-byte characters.
package uni

// Café is a name with an accent.
var Café = "crème brûlée"

// Sum uses Café after emoji and CJK text on the same line.
func Sum() string {
	/* 🎉 日本語 é */ return Café + "🚀"
}
