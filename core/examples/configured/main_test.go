package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/internal/leakcheck"
	"yolop.dev/core/internal/testdeadline"
	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/yep"
)

type closers []io.Closer

func (c closers) Close() error {
	for _, x := range c {
		x.Close()
	}
	return nil
}

// connect serves the example with token over in-memory pipes and returns
// the host side of the connection, initialized with cfg.
func connect(t *testing.T, token string, cfg string) (*jsonrpc.Conn, yep.InitializeResult) {
	t.Helper()
	leakcheck.Check(t)
	serverIn, hostOut := io.Pipe()
	hostIn, serverOut := io.Pipe()
	c := jsonrpc.NewConn(hostIn, hostOut, jsonrpc.Options{Closer: closers{hostOut, hostIn}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- newServer(token, hclog.NewNullLogger()).ServeConn(ctx, serverIn, serverOut)
		serverOut.Close()
	}()
	t.Cleanup(func() {
		cancel()
		c.Close()
		c.Wait()
		select {
		case <-done:
		case <-time.After(testdeadline.Left(t)):
			t.Error("the server did not stop")
		}
	})
	var res yep.InitializeResult
	if err := c.Call(ctx, yep.MethodInitialize, yep.InitializeParams{
		ProtocolVersion: yep.ProtocolVersion, Config: json.RawMessage(cfg), Capabilities: yep.Capabilities{yep.CapConfig},
	}, &res); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if err := c.Notify(ctx, yep.MethodInitialized, yep.InitializedParams{}); err != nil {
		t.Fatal(err)
	}
	return c, res
}

func tool(t *testing.T, c *jsonrpc.Conn, name, args string) string {
	t.Helper()
	var res yep.ToolResult
	if err := c.Call(context.Background(), yep.MethodToolCall, yep.ToolCallParams{ToolCallID: "1", Name: name, Args: json.RawMessage(args)}, &res); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res.Output
}

func configChanged(t *testing.T, c *jsonrpc.Conn, cfg string) string {
	t.Helper()
	var res yep.ConfigChangedResult
	if err := c.Call(context.Background(), yep.MethodConfigChanged, yep.ConfigChangedParams{Config: json.RawMessage(cfg)}, &res); err != nil {
		t.Fatalf("config/changed: %v", err)
	}
	return res.Status
}

func TestConfigured(t *testing.T) {
	const token = "tok-example-0123"
	c, res := connect(t, token, `{"endpoint":"https://api.example","style":"shout"}`)
	if !res.Capabilities.Has(yep.CapConfig) {
		t.Errorf("capabilities %v lack %q", res.Capabilities, yep.CapConfig)
	}
	if got := tool(t, c, "greet", `{"name":"ann"}`); got != "HELLO, ANN!" {
		t.Errorf("greet = %q", got)
	}
	who := tool(t, c, "whoami", `{}`)
	if !strings.Contains(who, "https://api.example") || !strings.Contains(who, "16 characters") || strings.Contains(who, token) {
		t.Errorf("whoami = %q", who)
	}
	// Greeting and style apply live.
	if st := configChanged(t, c, `{"endpoint":"https://api.example","greeting":"hi"}`); st != yep.ConfigOK {
		t.Errorf("live change = %q", st)
	}
	if got := tool(t, c, "greet", `{"name":"ann"}`); got != "hi, ann!" {
		t.Errorf("greet after change = %q", got)
	}
	// A new endpoint needs a restart; the old config stays.
	if st := configChanged(t, c, `{"endpoint":"https://other.example"}`); st != yep.ConfigRestartRequired {
		t.Errorf("endpoint change = %q", st)
	}
	if who := tool(t, c, "whoami", `{}`); !strings.Contains(who, "https://api.example") {
		t.Errorf("whoami after refused change = %q", who)
	}
}

func TestConfiguredWithoutToken(t *testing.T) {
	c, _ := connect(t, "", `null`)
	if who := tool(t, c, "whoami", `{}`); !strings.Contains(who, "no token") || !strings.Contains(who, "yolop ext secret set configured token") {
		t.Errorf("whoami = %q", who)
	}
	if got := tool(t, c, "greet", `{}`); got != "hello, world!" {
		t.Errorf("greet = %q", got)
	}
}

// TestManifestDeclaresTheSecretAsEnv pins plugin.json to the code: the
// token is a secret delivered in TokenEnv, and Config has a field for every
// non-secret property.
func TestManifestDeclaresTheSecretAsEnv(t *testing.T) {
	raw, err := os.ReadFile("plugin.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Yolop struct {
			ConfigSchema struct {
				Properties map[string]struct {
					Secret bool   `json:"secret"`
					Env    string `json:"env"`
				} `json:"properties"`
			} `json:"config_schema"`
		} `json:"yolop"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	props := m.Yolop.ConfigSchema.Properties
	if p := props["token"]; !p.Secret || p.Env != TokenEnv {
		t.Errorf("token = %+v, want secret with env %s", p, TokenEnv)
	}
	b, _ := json.Marshal(Config{})
	var fields map[string]any
	json.Unmarshal(b, &fields)
	for name, p := range props {
		if _, ok := fields[name]; ok == p.Secret {
			t.Errorf("property %s: in Config = %v, secret = %v (secrets never travel in config; everything else does)", name, ok, p.Secret)
		}
	}
}
