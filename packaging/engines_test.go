package packaging

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckEngines(t *testing.T) {
	m := func(req string) *Manifest {
		return &Manifest{Name: "demo", Engines: map[string]string{"yolop": req, "vscode": "^1.80"}}
	}
	for _, tc := range []struct {
		req, host string
		ok        bool
	}{
		{">=0.1", "0.1.0", true},
		{">=0.1", "0.1.0-dev", true}, // a dev build by its base version
		{">=0.2", "0.1.0-dev", false},
		{">=9.0", "0.1.0", false},
		{"^0.1", "0.1.5", true},
		{"^0.1", "0.2.0", false},
		{">=1.0, <2", "1.4.0", true},
		{">=1.0, <2", "2.0.0", false},
		{">=9.0", "", true}, // no host version: not checked
	} {
		err := m(tc.req).CheckEngines(tc.host)
		if (err == nil) != tc.ok {
			t.Errorf("%q on %q: err = %v, want ok=%v", tc.req, tc.host, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrEngine) {
			t.Errorf("%q on %q: %v does not match ErrEngine", tc.req, tc.host, err)
		}
	}
	err := m(">=9.0").CheckEngines("0.1.0")
	if err == nil || !strings.Contains(err.Error(), "needs yolop >=9.0, this is 0.1.0") {
		t.Fatalf("message = %v", err)
	}
	if err := m("soon").CheckEngines("0.1.0"); !errors.Is(err, ErrEngine) || !strings.Contains(err.Error(), `"soon"`) {
		t.Fatalf("an unparsable requirement: %v", err)
	}
	if err := (&Manifest{Name: "x"}).CheckEngines("0.1.0"); err != nil {
		t.Fatalf("no engines: %v", err)
	}
}
