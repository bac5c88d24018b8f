// Command ndjsonloop is the baseline of the round-trip benchmark: the
// smallest honest ndjson echo server. It reads one line from stdin, decodes
// it with encoding/json, and writes the response line to stdout — no
// framing library, no dispatch, no concurrency. Whatever the full stack
// (SDK server ⇄ jsonrpc client) costs beyond this loop is overhead.
package main

import (
	"bufio"
	"encoding/json"
	"os"
)

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name string `json:"name"`
		Args struct {
			Text string `json:"text"`
		} `json:"args"`
	} `json:"params"`
}

type result struct {
	Output string `json:"output"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  result          `json:"result"`
}

func main() {
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	for {
		line, err := in.ReadSlice('\n')
		if err != nil {
			return
		}
		var req request
		if err := json.Unmarshal(line, &req); err != nil {
			continue
		}
		out, err := json.Marshal(response{JSONRPC: "2.0", ID: req.ID, Result: result{Output: req.Params.Args.Text}})
		if err != nil {
			return
		}
		if _, err := os.Stdout.Write(append(out, '\n')); err != nil {
			return
		}
	}
}
