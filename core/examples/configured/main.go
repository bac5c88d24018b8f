// Command yolop-extension-configured is the example of an extension with
// configuration: a typed config struct filled from initialize.config, one
// secret read from the environment, and live config changes.
//
// Its plugin.json declares a config_schema with four fields:
//
//   - token (secret: true, env: CONFIGURED_TOKEN): a credential. The host
//     keeps it in the credential store and hands it to this server only as
//     the CONFIGURED_TOKEN environment variable; it is never in
//     initialize.config. The user sets it with
//     `yolop ext secret set configured token`, or is asked for it when
//     enabling the extension.
//   - endpoint (required): where the (pretend) API lives; a change needs a
//     restart, because the client is built from it once.
//   - greeting and style (an enum: plain or shout): applied live.
//
// Tools: greet returns the greeting for a name; whoami says which endpoint
// the server talks to and whether it has a token — never the token.
//
// Build it into the package's bin/ so the host finds the bare command:
//
//	go build -o core/examples/configured/bin/yolop-extension-configured ./core/examples/configured
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/hashicorp/go-hclog"

	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
)

// TokenEnv is the variable the token arrives in: the `env` of the secret
// field in plugin.json.
const TokenEnv = "CONFIGURED_TOKEN"

// Config is the capability config as it arrives in initialize.config and
// config/changed. Secret fields are never part of it.
type Config struct {
	Endpoint string `json:"endpoint"`
	Greeting string `json:"greeting"`
	Style    string `json:"style"` // "plain" or "shout"
}

// withDefaults fills what the schema defaults.
func (c Config) withDefaults() Config {
	if c.Greeting == "" {
		c.Greeting = "hello"
	}
	if c.Style == "" {
		c.Style = "plain"
	}
	return c
}

// state is the server's configuration, replaced as a whole on change.
type state struct {
	mu    sync.Mutex
	cfg   Config
	token string
}

func (s *state) get() Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

func decode(raw json.RawMessage) (Config, error) {
	var c Config
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &c); err != nil {
			return Config{}, fmt.Errorf("config: %w", err)
		}
	}
	return c.withDefaults(), nil
}

// newServer returns the server with its handlers, using token as the
// credential (main reads it from TokenEnv).
func newServer(token string, log hclog.Logger) *sdk.Server {
	st := &state{token: token, cfg: Config{}.withDefaults()}
	s := sdk.NewServer(sdk.Info{Name: "configured", Version: "0.1.0"}, sdk.Options{Logger: log})

	s.OnConfig(func(raw json.RawMessage) error {
		c, err := decode(raw)
		if err != nil {
			return err
		}
		st.mu.Lock()
		st.cfg = c
		st.mu.Unlock()
		return nil
	})

	s.OnConfigChanged(func(ctx context.Context, raw json.RawMessage) (bool, error) {
		c, err := decode(raw)
		if err != nil {
			return false, err
		}
		st.mu.Lock()
		defer st.mu.Unlock()
		if c.Endpoint != st.cfg.Endpoint {
			// The API client is built from the endpoint once: restart.
			return true, nil
		}
		st.cfg = c
		return false, nil
	})

	s.Tool("greet", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
		var args struct {
			Name string `json:"name"`
		}
		if err := call.Bind(&args); err != nil {
			return yep.ToolResult{}, err
		}
		if args.Name == "" {
			args.Name = "world"
		}
		c := st.get()
		out := fmt.Sprintf("%s, %s!", c.Greeting, args.Name)
		if c.Style == "shout" {
			out = strings.ToUpper(out)
		}
		return yep.ToolResult{Output: out}, nil
	})

	s.Tool("whoami", func(ctx context.Context, call *sdk.ToolCall) (yep.ToolResult, error) {
		c := st.get()
		auth := "no token (set it with `yolop ext secret set configured token`)"
		if st.token != "" {
			auth = fmt.Sprintf("a token from $%s (%d characters)", TokenEnv, len(st.token))
		}
		endpoint := c.Endpoint
		if endpoint == "" {
			endpoint = "(none)"
		}
		return yep.ToolResult{Output: fmt.Sprintf("endpoint %s, %s", endpoint, auth)}, nil
	})
	return s
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "yolop-extension-configured:", err)
		os.Exit(1)
	}
}

// run serves the protocol over stdin and stdout.
func run(ctx context.Context, stderr io.Writer) error {
	log := hclog.New(&hclog.LoggerOptions{Name: "configured", Output: stderr})
	s := newServer(os.Getenv(TokenEnv), log)
	if err := s.Serve(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
