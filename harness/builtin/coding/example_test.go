package coding_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"yolop.dev/core/host"
	"yolop.dev/harness/builtin/coding"
)

// The capability reads the workspace root on every call; a path that
// leaves it is an is_error result the agent reads.
func Example() {
	root, _ := os.MkdirTemp("", "ws")
	defer os.RemoveAll(root)
	c := coding.New(coding.Options{Root: func() string { return root }})
	ctx := context.Background()
	call := func(tool, args string) {
		res, err := c.CallTool(ctx, host.ToolCall{Name: tool, Args: json.RawMessage(args)}, nil)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: error=%v %s\n", tool, res.IsError, res.Output)
	}
	call("write_file", `{"path":"notes/todo.txt","content":"ship it\n"}`)
	call("edit_file", `{"path":"notes/todo.txt","old_string":"ship","new_string":"test"}`)
	call("grep", `{"pattern":"test"}`)
	call("bash", `{"command":"cat notes/todo.txt; exit 1"}`)
	// Output:
	// write_file: error=false created notes/todo.txt (8 bytes)
	// edit_file: error=false edited notes/todo.txt: 1 replacement
	// grep: error=false notes/todo.txt:1: test it
	// bash: error=true test it
	// [exit status 1]
}
