package jsonrpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"yolop.dev/core/jsonrpc"
)

// Two connections over in-memory pipes: one serves "add", the other calls
// it. Each side of a real connection is a process's stdin and stdout.
func ExampleConn() {
	aR, bW := io.Pipe() // b writes, a reads
	bR, aW := io.Pipe() // a writes, b reads

	server := jsonrpc.NewConn(bR, bW, jsonrpc.Options{
		Closer: bW,
		Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			var p struct{ A, B int }
			if err := json.Unmarshal(req.Params, &p); err != nil {
				return nil, err
			}
			return p.A + p.B, nil
		}),
	})
	client := jsonrpc.NewConn(aR, aW, jsonrpc.Options{Closer: aW})

	var sum int
	if err := client.Call(context.Background(), "add", map[string]int{"a": 2, "b": 3}, &sum); err != nil {
		panic(err)
	}
	fmt.Println("2 + 3 =", sum)

	// Close closes each side's writer, so the other side reads the end of
	// its input; Wait returns once a side's reader has stopped.
	client.Close()
	server.Close()
	client.Wait()
	server.Wait()
	// Output: 2 + 3 = 5
}
