package wasm_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"yolop.dev/core"
	"yolop.dev/transport/wasm"
)

// Settings of a re-executed test binary.
const (
	helperCacheEnv  = "YOLOP_WASM_CACHE"  // the CacheDir
	helperModuleEnv = "YOLOP_WASM_MODULE" // the module to start
)

// helper runs a re-executed test binary's part and returns its exit code.
func helper(mode string) int {
	switch mode {
	case "start":
		// Start the module with a persisted cache, make one round trip,
		// and print the transport's Stats as JSON.
		tr := wasm.New(wasm.Options{CacheDir: os.Getenv(helperCacheEnv)})
		defer tr.Close()
		inst, err := tr.Start(context.Background(), core.ServerSpec{Name: "loop", Command: os.Getenv(helperModuleEnv)})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer inst.Kill()
		if err := loopRoundTrip(inst, "from a helper"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		json.NewEncoder(os.Stdout).Encode(tr.Stats())
		return 0
	}
	fmt.Fprintf(os.Stderr, "unknown helper %q\n", mode)
	return 2
}

// loopRoundTrip sends the ndjsonloop guest one request and checks its
// answer. It reads byte by byte so that nothing past the line is lost.
func loopRoundTrip(inst core.Instance, text string) error {
	req := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tool/call","params":{"name":"echo","args":{"text":%q}}}`+"\n", text)
	if _, err := io.WriteString(inst.Stdin(), req); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	line, err := bufio.NewReaderSize(io.LimitReader(inst.Stdout(), 4096), 16).ReadString('\n')
	if err != nil {
		return fmt.Errorf("read: %w (stderr %q)", err, inst.StderrTail())
	}
	if !strings.Contains(line, fmt.Sprintf(`"output":%q`, text)) {
		return fmt.Errorf("answer %q", line)
	}
	return nil
}
