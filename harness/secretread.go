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
	var line string
	var err error
	if readHidden != nil {
		desc := ""
		if f.Description != "" {
			desc = " (" + f.Description + ")"
		}
		fmt.Fprintf(prompt, "Secret %s for extension %s%s, input hidden: ", f.Name, ext, desc)
		var b []byte
		b, err = readHidden()
		fmt.Fprintln(prompt)
		line = string(b)
	} else {
		line, err = bufio.NewReader(in).ReadString('\n')
		if errors.Is(err, io.EOF) {
			err = nil
		}
	}
	if err != nil {
		return "", fmt.Errorf("reading the secret: %w", err)
	}
	value := strings.TrimRight(line, "\r\n")
	if value == "" {
		return "", fmt.Errorf("no secret given for %s.%s (an empty line); nothing was saved", ext, f.Name)
	}
	return value, nil
}
