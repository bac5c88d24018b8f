package lab

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/examples/echo/echoext"
	"yolop.dev/transport/goplugin/plugin"
)

// The server programs the lab starts, by the mode [Serve] is given. A
// binary that runs the lab must call Serve when it is started with one
// (yolop does: `yolop serve-lab <mode>`), since the lab starts copies of
// that binary as its servers.
const (
	// ServeFloor is the floor: the smallest honest ndjson echo server
	// (read a line, decode it with encoding/json, write the response
	// line), no framing library, no dispatch, no concurrency.
	ServeFloor = "floor"
	// ServeStdio is the echo extension (core/examples/echo) over stdio.
	ServeStdio = "stdio"
	// ServeGoPlugin is the echo extension over go-plugin
	// (transport/goplugin/plugin).
	ServeGoPlugin = "go-plugin"
)

// Serve runs the lab server named by mode on the process's standard
// streams until its input ends or ctx is cancelled. An unknown mode is an
// error.
func Serve(ctx context.Context, mode string, stdin io.Reader, stdout, stderr io.Writer) error {
	log := hclog.New(&hclog.LoggerOptions{Name: "lab-" + mode, Output: stderr, Level: hclog.Warn})
	var err error
	switch mode {
	case ServeFloor:
		err = serveFloor(stdin, stdout)
	case ServeStdio:
		err = echoext.New(log).ServeConn(ctx, stdin, stdout)
	case ServeGoPlugin:
		err = plugin.Serve(ctx, echoext.New(log), plugin.Options{})
	case ServeGoPluginGRPC:
		serveGoPluginGRPC()
	case ServeGoPluginNetRPC:
		serveGoPluginNetRPC()
	case ServeMCPSDK:
		err = serveMCPSDK(ctx, stdin, stdout)
	case ServeSessionTrace:
		err = serveSessionTrace(ctx, stdin, stdout)
	default:
		return fmt.Errorf("no lab server %q; want one of %s, %s, %s, %s, %s, %s, %s", mode, ServeFloor, ServeStdio, ServeGoPlugin, ServeGoPluginGRPC, ServeGoPluginNetRPC, ServeMCPSDK, ServeSessionTrace)
	}
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

type floorRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name string `json:"name"`
		Args struct {
			Text string `json:"text"`
		} `json:"args"`
	} `json:"params"`
}

type floorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  struct {
		Output string `json:"output"`
	} `json:"result"`
}

// serveFloor is the floor server: core/internal/testservers/ndjsonloop,
// with lines of any length.
func serveFloor(stdin io.Reader, stdout io.Writer) error {
	in := bufio.NewReaderSize(stdin, 64<<10)
	var long []byte
	for {
		line, err := in.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = in.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil {
			return nil // input ended
		}
		var req floorRequest
		if err := json.Unmarshal(line, &req); err != nil {
			continue
		}
		resp := floorResponse{JSONRPC: "2.0", ID: req.ID}
		resp.Result.Output = req.Params.Args.Text
		out, err := json.Marshal(resp)
		if err != nil {
			return err
		}
		if _, err := stdout.Write(append(out, '\n')); err != nil {
			return err
		}
	}
}
