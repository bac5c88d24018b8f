package harness

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"yolop.dev/packaging"
)

// String is the state as `yolop ext secret list` prints it, never with a
// value: "<ext>.<field>\tset|unset\tenv <VAR>".
func (s SecretState) String() string {
	state := "unset"
	if s.Set {
		state = "set"
	}
	return fmt.Sprintf("%s.%s\t%s\tenv %s", s.Extension, s.Field, state, s.Env)
}

// ReadSecretValue reads the value of secret field f of extension ext to
// store: typed on a terminal with readHidden (echo off: x/term's
// ReadPassword), after a prompt on prompt that names the field and its
// description; or, with readHidden nil, one line from in (a pipe). The
// line end is dropped; an empty value is an error, as nothing must be
// saved.
func ReadSecretValue(ext string, f packaging.ConfigField, in io.Reader, prompt io.Writer, readHidden func() ([]byte, error)) (string, error) {
	desc := ""
	if f.Description != "" {
		desc = " (" + f.Description + ")"
	}
	line, err := readHiddenLine(fmt.Sprintf("Secret %s for extension %s%s, input hidden: ", f.Name, ext, desc), in, prompt, readHidden)
	if err != nil {
		return "", fmt.Errorf("reading the secret: %w", err)
	}
	value := strings.TrimRight(line, "\r\n")
	if value == "" {
		return "", fmt.Errorf("no secret given for %s.%s (an empty line); nothing was saved", ext, f.Name)
	}
	return value, nil
}

// ReadModelKey reads the API key of a model provider to store, as
// [ReadSecretValue] reads a secret: typed with readHidden after a prompt,
// or one line of in. Surrounding space is dropped; an empty key is an
// error.
func ReadModelKey(provider string, in io.Reader, prompt io.Writer, readHidden func() ([]byte, error)) (string, error) {
	line, err := readHiddenLine(provider+" API key (input hidden): ", in, prompt, readHidden)
	if err != nil {
		return "", fmt.Errorf("reading the key: %w", err)
	}
	key := strings.TrimSpace(line)
	if key == "" {
		return "", fmt.Errorf("no %s API key given (an empty line); nothing was saved. Type it, or pipe it: printf '%%s\\n' \"$KEY\" | yolop model key %s", provider, provider)
	}
	return key, nil
}

// readHiddenLine reads one value: with readHidden after question on
// prompt, or one line of in (its end kept) when readHidden is nil.
func readHiddenLine(question string, in io.Reader, prompt io.Writer, readHidden func() ([]byte, error)) (string, error) {
	if readHidden != nil {
		fmt.Fprint(prompt, question)
		b, err := readHidden()
		fmt.Fprintln(prompt)
		return string(b), err
	}
	line, err := bufio.NewReader(in).ReadString('\n')
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return line, err
}
