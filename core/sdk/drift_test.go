package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"testing"

	"yolop.dev/core/jsonrpc"
	"yolop.dev/core/yep"
)

// TestWireTypesRoundTrip is the drift test: every wire type of core/yep,
// with every field set, crosses a real connection in both directions and
// arrives equal. The values are built by reflection, so a field added to a
// yep type is covered without editing this test; a field a codec forgets
// to carry arrives zero and fails it.
func TestWireTypesRoundTrip(t *testing.T) {
	for _, m := range yep.Methods {
		for _, dir := range []string{"host→server", "server→host"} {
			t.Run(m.Name+"/"+dir, func(t *testing.T) {
				caller, callee := connPair(t)
				if dir == "server→host" {
					caller, callee = callee, caller
				}
				params := populated(t, m.Params)
				var result any
				if m.Result != nil {
					result = populated(t, m.Result)
				}
				// The connection answers some methods itself (cancel), so
				// the types travel under a method of the test's own.
				method := "drift/" + m.Name
				got := make(chan any, 1)
				callee.handle = func(req *jsonrpc.Request) (any, error) {
					p := reflect.New(m.Params)
					if err := decodeParams(req.Params, p.Interface()); err != nil {
						err = fmt.Errorf("decoding %s params: %w", m.Name, err)
						got <- err
						return nil, err
					}
					got <- p.Elem().Interface()
					return result, nil
				}
				ctx := context.Background()
				if m.Kind == yep.Notification {
					if err := caller.conn.Notify(ctx, method, params); err != nil {
						t.Fatalf("Notify(%s): %v", m.Name, err)
					}
				} else {
					res := reflect.New(m.Result)
					if err := caller.conn.Call(ctx, method, params, res.Interface()); err != nil {
						t.Fatalf("Call(%s): %v", m.Name, err)
					}
					checkEqual(t, m.Name+" result", result, res.Elem().Interface())
				}
				checkEqual(t, m.Name+" params", params, <-got)
			})
		}
	}
}

// TestCarriedTypesRoundTrip covers the wire types carried inside another
// message's raw member: the handshake's capability params and the
// payload of hook/fire, decoded the way their receivers decode them.
func TestCarriedTypesRoundTrip(t *testing.T) {
	carried := map[string]reflect.Type{
		yep.CapTools:      reflect.TypeFor[[]yep.ToolDecl](),
		yep.CapPrompt:     reflect.TypeFor[yep.PromptDecl](),
		yep.CapHooks:      reflect.TypeFor[[]yep.HookSubscription](),
		yep.CapMCPServers: reflect.TypeFor[[]yep.MCPServerDecl](),
		yep.CapCommands:   reflect.TypeFor[[]yep.CommandDecl](),
		yep.CapProvider:   reflect.TypeFor[yep.ProviderParams](),
	}
	caller, callee := connPair(t)
	sent := yep.InitializeResult{CapabilityParams: yep.CapabilityParams{}}
	for token, typ := range carried {
		if err := sent.CapabilityParams.Set(token, populated(t, typ)); err != nil {
			t.Fatal(err)
		}
	}
	callee.handle = func(*jsonrpc.Request) (any, error) { return sent, nil }
	var got yep.InitializeResult
	if err := caller.conn.Call(context.Background(), yep.MethodInitialize, yep.InitializeParams{}, &got); err != nil {
		t.Fatal(err)
	}
	for token, typ := range carried {
		v := reflect.New(typ)
		if ok, err := got.CapabilityParams.Decode(token, v.Interface()); !ok || err != nil {
			t.Fatalf("Decode(%q) = %v, %v", token, ok, err)
		}
		checkEqual(t, "capability params "+token, populated(t, typ), v.Elem().Interface())
	}

	payload := populated(t, reflect.TypeFor[yep.HookPayload]()).(yep.HookPayload)
	raw, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	var decoded yep.HookPayload
	if err := decodeParams(raw, &decoded); err != nil {
		t.Fatal(err)
	}
	checkEqual(t, "hook payload", payload, decoded)
}

type peer struct {
	conn   *jsonrpc.Conn
	handle func(*jsonrpc.Request) (any, error)
}

// connPair connects two jsonrpc connections over in-memory pipes.
func connPair(t *testing.T) (a, b *peer) {
	a, b = &peer{}, &peer{}
	ar, bw := io.Pipe()
	br, aw := io.Pipe()
	open := func(p *peer, r *io.PipeReader, w *io.PipeWriter) {
		p.conn = jsonrpc.NewConn(r, w, jsonrpc.Options{
			Closer: w,
			Handler: jsonrpc.HandlerFunc(func(_ context.Context, req *jsonrpc.Request) (any, error) {
				return p.handle(req)
			}),
		})
		t.Cleanup(func() {
			p.conn.Close()
			r.Close()
			p.conn.Wait()
		})
	}
	open(a, ar, aw)
	open(b, br, bw)
	return a, b
}

func checkEqual(t *testing.T, what string, want, got any) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		w, _ := json.Marshal(want)
		g, _ := json.Marshal(got)
		t.Errorf("%s changed on the wire:\nsent     %s\nreceived %s", what, w, g)
	}
}

// populated returns a value of type typ with every field set to a
// non-zero value that survives a JSON round trip.
func populated(t *testing.T, typ reflect.Type) any {
	t.Helper()
	v := reflect.New(typ).Elem()
	fill(t, v, typ.String())
	return v.Interface()
}

var (
	rawType = reflect.TypeFor[json.RawMessage]()
	idType  = reflect.TypeFor[yep.ID]()
)

func fill(t *testing.T, v reflect.Value, path string) {
	t.Helper()
	switch {
	case v.Type() == rawType:
		v.SetBytes([]byte(fmt.Sprintf(`{"at":%q}`, path)))
		return
	case v.Type() == idType:
		v.SetBytes(yep.IntID(42))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("value of " + path)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(7)
	case reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), path)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(t, v.Index(0), path+"[0]")
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		e := reflect.New(v.Type().Elem()).Elem()
		fill(t, e, path+"[k]")
		v.SetMapIndex(reflect.ValueOf("k").Convert(v.Type().Key()), e)
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() || f.Tag.Get("json") == "-" {
				continue
			}
			fill(t, v.Field(i), path+"."+f.Name)
		}
	default:
		t.Fatalf("populated: %s is a %s; teach fill to set it", path, v.Kind())
	}
}
