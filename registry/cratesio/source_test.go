package cratesio

import (
	"errors"
	"testing"
)

func TestParseSource(t *testing.T) {
	tests := []struct{ src, crate, req string }{
		{"echo", "yolop-extension-echo", ""},
		{"echo@0.1", "yolop-extension-echo", "0.1"},
		{"crates.io:yolop-extension-lsp@=1.2.3", "yolop-extension-lsp", "=1.2.3"},
		{"crates.io:serde", "serde", ""},
		{"yolop-extension-echo", "yolop-extension-echo", ""},
	}
	for _, tt := range tests {
		c, r, err := ParseSource(tt.src)
		if err != nil || c != tt.crate || r != tt.req {
			t.Errorf("ParseSource(%q) = %q, %q, %v; want %q, %q", tt.src, c, r, err, tt.crate, tt.req)
		}
	}
	for _, src := range []string{"crates.io:../x", "echo@abc", "crates.io:", "ec/ho"} {
		if _, _, err := ParseSource(src); err == nil {
			t.Errorf("ParseSource(%q) accepted", src)
		} else if !errors.Is(err, ErrInvalidName) && !errors.Is(err, ErrInvalidRequirement) {
			t.Errorf("ParseSource(%q) = %v", src, err)
		}
	}
	if ExtensionName("yolop-extension-echo") != "echo" || ExtensionName("serde") != "" {
		t.Error("ExtensionName")
	}
}
