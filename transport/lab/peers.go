package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/rpc"
	"os"
	"os/exec"

	"github.com/hashicorp/go-hclog"
	hplugin "github.com/hashicorp/go-plugin"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"yolop.dev/transport/goplugin"
)

// The peers: what a tool host could be built on instead of YEP.
const (
	// GoPluginNetRPC is hashicorp/go-plugin with its net/rpc protocol (not
	// gRPC): an Echo method of a net/rpc plugin, through go-plugin's own
	// client, without AutoMTLS (go-plugin's default).
	GoPluginNetRPC = "go-plugin-netrpc"
	// MCPSDK is the official MCP Go SDK: its server as a child process
	// over stdio, its client (CommandTransport) calling an echo tool.
	MCPSDK = "mcp-sdk"
)

// Server modes of the peers.
const (
	// ServeGoPluginNetRPC serves the net/rpc Echo plugin through go-plugin.
	ServeGoPluginNetRPC = "go-plugin-netrpc"
	// ServeMCPSDK serves an echo tool with the MCP Go SDK over stdio.
	ServeMCPSDK = "mcp-sdk"
)

const netrpcEchoPluginName = "lab-echo"

// NetRPCEcho is the net/rpc Echo service (exported, as net/rpc requires).
type NetRPCEcho struct{}

// Echo returns the text it is given.
func (NetRPCEcho) Echo(in string, out *string) error {
	*out = in
	return nil
}

// netrpcEchoPlugin is NetRPCEcho as a go-plugin net/rpc plugin, both sides.
type netrpcEchoPlugin struct{}

func (netrpcEchoPlugin) Server(*hplugin.MuxBroker) (any, error) { return NetRPCEcho{}, nil }
func (netrpcEchoPlugin) Client(_ *hplugin.MuxBroker, c *rpc.Client) (any, error) {
	return c, nil
}

func serveGoPluginNetRPC() {
	hplugin.Serve(&hplugin.ServeConfig{
		HandshakeConfig: goplugin.Handshake,
		Plugins:         hplugin.PluginSet{netrpcEchoPluginName: netrpcEchoPlugin{}},
		Logger:          hclog.NewNullLogger(),
	})
}

// netrpcClient calls Echo through go-plugin's net/rpc client.
type netrpcClient struct {
	client  *hplugin.Client
	rpc     *rpc.Client
	release func()
}

func startGoPluginNetRPC(ctx context.Context, exe string, args []string) (*netrpcClient, error) {
	cmd := exec.Command(exe, args...)
	cmd.SysProcAttr = childAttr()
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	c := hplugin.NewClient(&hplugin.ClientConfig{
		HandshakeConfig:  goplugin.Handshake,
		Plugins:          hplugin.PluginSet{netrpcEchoPluginName: netrpcEchoPlugin{}},
		Cmd:              cmd,
		AllowedProtocols: []hplugin.Protocol{hplugin.ProtocolNetRPC},
		Logger:           hclog.NewNullLogger(),
	})
	var cp hplugin.ClientProtocol
	release, err := startChild(func() (err error) {
		cp, err = c.Client()
		return err
	})
	if err != nil {
		c.Kill()
		release()
		return nil, fmt.Errorf("starting the go-plugin net/rpc echo: %w", err)
	}
	raw, err := cp.Dispense(netrpcEchoPluginName)
	if err != nil {
		c.Kill()
		release()
		return nil, fmt.Errorf("dispensing the go-plugin net/rpc echo: %w", err)
	}
	n := &netrpcClient{client: c, rpc: raw.(*rpc.Client), release: release}
	if err := n.call(ctx, newPayload(5), 1); err != nil {
		n.close()
		return nil, err
	}
	return n, nil
}

func (n *netrpcClient) call(_ context.Context, p *payload, _ int) error {
	var out string
	if err := n.rpc.Call("Plugin.Echo", p.text, &out); err != nil {
		return err
	}
	if len(out) != len(p.text) {
		return fmt.Errorf("Echo answered %d bytes, want %d", len(out), len(p.text))
	}
	return nil
}

func (n *netrpcClient) close() error {
	n.client.Kill()
	n.release()
	return nil
}

// --- the MCP Go SDK -------------------------------------------------------

type mcpEchoIn struct {
	Text string `json:"text" jsonschema:"the text to return"`
}

func serveMCPSDK(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	s := mcp.NewServer(&mcp.Implementation{Name: "yolop-lab-echo", Version: "0.1.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Return the given text unchanged."}, func(_ context.Context, _ *mcp.CallToolRequest, in mcpEchoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	return s.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}, MaxLineLength: -1})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// mcpClient calls the echo tool with the MCP Go SDK's client over the
// stdio of a child process.
type mcpClient struct {
	cmd     *exec.Cmd
	cs      *mcp.ClientSession
	release func()
}

func startMCPSDK(ctx context.Context, exe string, args []string) (*mcpClient, error) {
	cmd := exec.Command(exe, args...)
	cmd.SysProcAttr = childAttr()
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	client := mcp.NewClient(&mcp.Implementation{Name: "yolop-lab", Version: "0.1.0"}, nil)
	var cs *mcp.ClientSession
	release, err := startChild(func() (err error) {
		cs, err = client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		return err
	})
	if err != nil {
		release()
		return nil, fmt.Errorf("starting the MCP SDK echo server: %w", err)
	}
	m := &mcpClient{cmd: cmd, cs: cs, release: release}
	if err := m.call(ctx, newPayload(5), 1); err != nil {
		m.close()
		return nil, err
	}
	return m, nil
}

func (m *mcpClient) call(ctx context.Context, p *payload, _ int) error {
	res, err := m.cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(p.args)})
	if err != nil {
		return err
	}
	if res.IsError || len(res.Content) != 1 {
		return fmt.Errorf("echo answered %d contents (error %v)", len(res.Content), res.IsError)
	}
	t, ok := res.Content[0].(*mcp.TextContent)
	if !ok || len(t.Text) != len(p.text) {
		return fmt.Errorf("echo answered %T, want %d bytes of text", res.Content[0], len(p.text))
	}
	return nil
}

func (m *mcpClient) close() error {
	err := m.cs.Close()
	m.release()
	return err
}
