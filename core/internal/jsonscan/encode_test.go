package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// encodeString is what AppendString must match: encoding/json with HTML
// escaping off.
func encodeString(t *testing.T, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

var stringSeeds = []string{
	"", "plain", strings.Repeat("eight by", 9), "quote \" and backslash \\ after a run",
	"ctl \x00\x01\x1f\t\n\r\b\f", "<html> & stays", "é ünï 😀 and more text past eight", "bad \xff utf-8 \xc3",
	"line sep \u2028 para sep \u2029", "\x7f", strings.Repeat("a", 7) + "\"", strings.Repeat("b", 15) + "\xe2\x80\xa8",
}

func TestAppendString(t *testing.T) {
	for _, s := range stringSeeds {
		if got, want := AppendString([]byte("x"), s), append([]byte("x"), encodeString(t, s)...); !bytes.Equal(got, want) {
			t.Errorf("AppendString(%q) = %s, encoding/json gives %s", s, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range stringSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := AppendString(nil, s), encodeString(t, s); !bytes.Equal(got, want) {
			t.Fatalf("AppendString(%q) = %s, encoding/json gives %s", s, got, want)
		}
	})
}
