// Command app prints greetings.
package main

import (
	"fmt"

	"example.com/fixture/greet"
	"example.com/fixture/uni"
)

func main() {
	fmt.Println(greet.Hello("world"))
	g := greet.Greeter{Prefix: "> "}
	fmt.Println(g.Greet("gopher"), greet.Shout("hey"))
	fmt.Println(uni.Café, uni.Sum())
}
