package harness_test

import (
	"errors"
	"strings"
	"testing"

	"yolop.dev/harness"
	"yolop.dev/packaging"
)

func TestReadSecretValue(t *testing.T) {
	f := packaging.ConfigField{Name: "token", Description: "the API token"}
	var prompt strings.Builder
	// A pipe: one line, its end dropped, a missing final newline accepted,
	// no prompt.
	for in, want := range map[string]string{"s3cret\r\nmore\n": "s3cret", "s3cret": "s3cret"} {
		got, err := harness.ReadSecretValue("life", f, strings.NewReader(in), &prompt, nil)
		if err != nil || got != want {
			t.Errorf("pipe %q = %q, %v; want %q", in, got, err, want)
		}
	}
	if prompt.Len() != 0 {
		t.Errorf("a pipe was prompted: %q", prompt.String())
	}
	if _, err := harness.ReadSecretValue("life", f, strings.NewReader("\n"), &prompt, nil); err == nil || err.Error() != "no secret given for life.token (an empty line); nothing was saved" {
		t.Errorf("empty line: %v", err)
	}

	// A terminal: the prompt names the field, then the hidden read.
	got, err := harness.ReadSecretValue("life", f, strings.NewReader("not read\n"), &prompt, func() ([]byte, error) { return []byte("typed"), nil })
	if err != nil || got != "typed" {
		t.Fatalf("terminal = %q, %v", got, err)
	}
	if prompt.String() != "Secret token for extension life (the API token), input hidden: \n" {
		t.Errorf("prompt = %q", prompt.String())
	}
	broken := errors.New("terminal gone")
	if _, err := harness.ReadSecretValue("life", f, nil, &prompt, func() ([]byte, error) { return nil, broken }); !errors.Is(err, broken) {
		t.Errorf("failed read: %v", err)
	}
}

func TestSecretStateString(t *testing.T) {
	s := harness.SecretState{Extension: "life", Field: "token", Env: "LIFE_TOKEN"}
	if got := s.String(); got != "life.token\tunset\tenv LIFE_TOKEN" {
		t.Errorf("unset: %q", got)
	}
	s.Set = true
	if got := s.String(); got != "life.token\tset\tenv LIFE_TOKEN" {
		t.Errorf("set: %q", got)
	}
}
