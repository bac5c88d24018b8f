package harness_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"yolop.dev/harness"
)

// A custom host opens a config directory and runs a session over the
// extensions enabled there (none in this new directory) and the built-in
// capabilities; then it calls tools by name.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "harness-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	h, err := harness.Open(ctx, harness.Options{ConfigDir: dir})
	if err != nil {
		panic(err)
	}
	s, warnings := h.NewSession(ctx, harness.SessionOptions{WorkspaceRoot: dir})
	defer s.Close()
	if err := s.Start(ctx); err != nil {
		panic(err)
	}
	fmt.Println("warnings:", len(warnings))
	for _, t := range s.Tools() {
		fmt.Println(t.Name)
	}
	// Output:
	// warnings: 0
	// install_extension
	// update_extension
	// list_extensions
	// enable_extension
	// disable_extension
	// remove_extension
	// scaffold_extension
	// doctor_extension
	// reload_extension
	// set_extension_secret
	// list_skills
	// read_skill
}

// A front-end's line history keeps what was typed across sessions, with
// every stored secret scrubbed before it reaches the file.
func ExampleLoadHistory() {
	dir, err := os.MkdirTemp("", "harness-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, harness.HistoryFile)
	scrub := func(s string) string { return strings.ReplaceAll(s, "hunter2", "[redacted]") }

	h := harness.LoadHistory(path, scrub)
	h.Add(`/call login {"password":"hunter2"}`)
	h.Add("/tools")
	h.Add("/tools") // the same as the last line: not added again

	again := harness.LoadHistory(path, scrub) // the next session
	for i := again.Len() - 1; i >= 0; i-- {
		fmt.Println(again.At(i))
	}
	// Output:
	// /call login {"password":"[redacted]"}
	// /tools
}
