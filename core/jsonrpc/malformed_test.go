package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"yolop.dev/core/yep"
)

// callAsync starts a call on c and returns its id, as read from the
// request the connection wrote, and a channel with the call's error.
func callAsync(t *testing.T, c *Conn, recv func() map[string]any, method string) (int64, <-chan error) {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- c.Call(context.Background(), method, nil, nil) }()
	req := recv()
	if req["method"] != method {
		t.Fatalf("the connection wrote %v, want a %s request", req, method)
	}
	return int64(req["id"].(float64)), errc
}

// isPending reports whether the call with id still waits for its response.
func isPending(c *Conn, id int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.pending[id]
	return ok
}

// TestMalformedResponseFailsItsCall sends, for a pending call, a response
// line the connection must reject, then a valid response for a second
// call. Lines are dispatched in order, so by the time the second call has
// its answer the rejected line has been handled: the first call must no
// longer be pending, and must have failed with the violation named.
func TestMalformedResponseFailsItsCall(t *testing.T) {
	cases := []struct {
		name, line, reason string
	}{
		{"both result and error", `{"jsonrpc":"2.0","id":%d,"result":1,"error":{"code":1,"message":"x"}}`, "both result and error"},
		{"neither result nor error", `{"jsonrpc":"2.0","id":%d}`, "neither result nor error"},
		{"batch array", `[{"jsonrpc":"2.0","id":%d,"result":1}]`, "a batch (JSON array) of messages; YEP sends one object per line"},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":%d,"result":1}`, `"jsonrpc" is "1.0", not "2.0"`},
		{"duplicate key", `{"jsonrpc":"2.0","id":%d,"result":1,"result":2}`, `duplicate member "result"`},
		{"duplicate key before the id", `{"jsonrpc":"2.0","error":{"message":"a"},"error":{"message":"b"},"id":%d}`, `duplicate member "error"`},
		{"case-variant key", `{"jsonrpc":"2.0","id":%d,"Result":1}`, `case-variant member "Result"`},
		{"case-variant id", `{"jsonrpc":"2.0","ID":%d,"result":1}`, `case-variant member "ID"`},
		{"no jsonrpc member", `{"id":%d,"result":1}`, `no "jsonrpc" member; a response carries "jsonrpc":"2.0"`},
		{"id as a fraction", `{"jsonrpc":"2.0","id":%d.0,"result":1}`, idReason("%d.0")},
		{"id with an exponent", `{"jsonrpc":"2.0","id":%de0,"result":1}`, idReason("%de0")},
		{"id with a negative exponent", `{"jsonrpc":"2.0","id":%d0e-1,"result":1}`, idReason("%d0e-1")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			send, recv, c := raw(t, Options{})
			bad, badErr := callAsync(t, c, recv, "first")
			good, goodErr := callAsync(t, c, recv, "second")
			send(fmt.Sprintf(tc.line, bad))
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":"ok"}`, good))
			if err := <-goodErr; err != nil {
				t.Fatalf("the valid response after the malformed one: %v", err)
			}
			if isPending(c, bad) {
				t.Fatalf("call %d still waits after its malformed response %s was rejected", bad, fmt.Sprintf(tc.line, bad))
			}
			err := <-badErr
			var ire *InvalidResponseError
			if !errors.As(err, &ire) {
				t.Fatalf("err = %v (%T), want an *InvalidResponseError", err, err)
			}
			if strings.Contains(tc.reason, "%d") {
				tc.reason = fmt.Sprintf(tc.reason, bad)
			}
			if ire.Reason != tc.reason || ire.Method != "first" {
				t.Errorf("InvalidResponseError = %+v, want reason %q for method first", ire, tc.reason)
			}
			if want := "first: invalid response: " + tc.reason; err.Error() != want {
				t.Errorf("err = %q, want %q", err, want)
			}
		})
	}
}

// idReason is the violation named for a response whose id is the number
// id, written other than as an integer.
func idReason(id string) string {
	return `"id" is ` + id + `, not a string or an integer; send the request's id back exactly as it came`
}

// TestMalformedRequestNeverFailsACall checks that a rejected line that is
// a request (it has a method) is answered as before and leaves this side's
// call with the same id alone: each direction has its own id space.
func TestMalformedRequestNeverFailsACall(t *testing.T) {
	for _, tc := range []struct {
		line     string
		answered bool // an invalid request with a valid id is answered
	}{
		{`{"jsonrpc":"2.0","id":%d,"method":"x","result":1}`, true},
		{`{"jsonrpc":"1.0","id":%d,"method":"x"}`, true},
		{`{"jsonrpc":"2.0","id":%d,"method":"x","params":{},"params":{}}`, true},
		{`[{"jsonrpc":"2.0","id":%d,"method":"x"}]`, false},
		{`{"jsonrpc":"2.0","id":%d,"Method":"x","result":1}`, false},
	} {
		t.Run(tc.line, func(t *testing.T) {
			send, recv, c := raw(t, Options{})
			id, errc := callAsync(t, c, recv, "mine")
			send(fmt.Sprintf(tc.line, id))
			if tc.answered {
				m := recv()
				e, _ := m["error"].(map[string]any)
				if e == nil || e["code"].(float64) != float64(yep.CodeInvalidRequest) {
					t.Fatalf("reply = %v, want invalid request", m)
				}
			}
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":"ok"}`, id))
			if err := <-errc; err != nil {
				t.Fatalf("call = %v; the malformed request must not touch it", err)
			}
		})
	}
}
