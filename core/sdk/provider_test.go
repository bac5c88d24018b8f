package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"yolop.dev/core/sdk"
	"yolop.dev/core/yep"
)

// A server that is a model provider announces "provider" with what its
// ProviderFunc returned at initialize — after OnConfig, with a context
// that ends when the connection does.
func TestProviderAnnouncedAtInitialize(t *testing.T) {
	s := sdk.NewServer(sdk.Info{Name: "model"}, quiet())
	var order []string
	var life context.Context
	s.OnConfig(func(cfg json.RawMessage) error {
		order = append(order, "config "+string(cfg))
		return nil
	})
	s.Command("verify", "check", func(context.Context, string) (yep.CommandExecuteResult, error) {
		return yep.CommandExecuteResult{}, nil
	})
	s.Provider(func(ctx context.Context) (yep.ProviderParams, error) {
		order = append(order, "provider")
		life = ctx
		return yep.ProviderParams{BaseURL: "http://127.0.0.1:4321/v1", Models: []string{"m1", "m2"}}, nil
	})
	h := serve(t, s)
	var res yep.InitializeResult
	if err := h.Call(ctxT(t), yep.MethodInitialize, yep.InitializeParams{ProtocolVersion: "1.0", Config: json.RawMessage(`{"script":"s.json"}`)}, &res); err != nil {
		t.Fatal(err)
	}
	if want := []string{`config {"script":"s.json"}`, "provider"}; !slices.Equal(order, want) {
		t.Errorf("calls = %q, want %q", order, want)
	}
	if want := []string{"commands", "cancel", "provider"}; !slices.Equal(res.Capabilities, want) {
		t.Errorf("capabilities = %v, want %v", res.Capabilities, want)
	}
	var p yep.ProviderParams
	if ok, err := res.CapabilityParams.Decode(yep.CapProvider, &p); !ok || err != nil {
		t.Fatalf("capability_params.provider: %v, %v (params %s)", ok, err, res.CapabilityParams)
	}
	if p.BaseURL != "http://127.0.0.1:4321/v1" || !slices.Equal(p.Models, []string{"m1", "m2"}) {
		t.Errorf("provider params = %+v", p)
	}
	if _, ok := res.CapabilityParams[yep.CapCommands]; !ok {
		t.Errorf("the other capability_params are gone: %s", res.CapabilityParams)
	}
	if life.Err() != nil {
		t.Fatal("the provider's context ended with initialize")
	}
	// exit ends the connection, and with it the provider's context.
	if err := h.Notify(ctxT(t), yep.MethodExit, yep.ExitParams{}); err != nil {
		t.Fatal(err)
	}
	if err := <-h.done; err != nil {
		t.Fatalf("ServeConn: %v", err)
	}
	h.done <- nil // for the cleanup
	if life.Err() == nil {
		t.Error("the provider's context outlived the connection")
	}
}

// A ProviderFunc's error fails initialize with it, and a panic is an
// internal error: the host reports either, and nothing else is served.
func TestProviderFailureFailsInitialize(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    sdk.ProviderFunc
		code int64
		want string
	}{
		{"error", func(context.Context) (yep.ProviderParams, error) {
			return yep.ProviderParams{}, errors.New("script.json: no such file")
		}, yep.CodeInternalError, `extension "model": its model provider did not start: script.json: no such file`},
		{"panic", func(context.Context) (yep.ProviderParams, error) { panic("boom") }, yep.CodeInternalError, "Provider panicked: boom"},
		{"protocol error", func(context.Context) (yep.ProviderParams, error) {
			return yep.ProviderParams{}, yep.Errorf(yep.CodeInvalidParams, "config.script is required")
		}, yep.CodeInvalidParams, "config.script is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := sdk.NewServer(sdk.Info{Name: "model"}, quiet())
			s.Tool("echo", echoTool)
			s.Provider(tc.f)
			h := serve(t, s)
			err := h.Call(ctxT(t), yep.MethodInitialize, yep.InitializeParams{ProtocolVersion: "1.0"}, nil)
			if wireCode(err) != tc.code || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("initialize: %v (code %d), want code %d with %q", err, wireCode(err), tc.code, tc.want)
			}
			if _, err := h.tool(t, "echo", `{}`); wireCode(err) != yep.CodeNotInitialized {
				t.Errorf("a call after the failed initialize: %v", err)
			}
		})
	}
}

func TestProviderRegistrationPanics(t *testing.T) {
	f := func(context.Context) (yep.ProviderParams, error) { return yep.ProviderParams{}, nil }
	for name, reg := range map[string]func(s *sdk.Server){
		"nil":   func(s *sdk.Server) { s.Provider(nil) },
		"twice": func(s *sdk.Server) { s.Provider(f); s.Provider(f) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			reg(sdk.NewServer(sdk.Info{}, quiet()))
		})
	}
}
