package config

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"
	"sync"

	"yolop.dev/core/host"
	"yolop.dev/core/yep"
	"yolop.dev/harness/secrets"
	"yolop.dev/packaging"
)

// A Kind is one way of asking the user for a config field: setup picks the
// first kind in [Kinds] that accepts a field. New kinds (a file picker, a
// URL with a connectivity check) slot in by being added to the list; the
// callers of [Resolver.Setup] do not change.
type Kind interface {
	// Name labels the kind in messages: "secret", "enum", "text".
	Name() string
	// Accepts reports whether this kind handles f.
	Accepts(f packaging.ConfigField) bool
	// Question is the ui/ask question for f of extension ext. problem is
	// why the previous answer was refused, or "".
	Question(ext string, f packaging.ConfigField, problem string) yep.UIAskParams
	// Parse turns an answer into the field's value.
	Parse(f packaging.ConfigField, answer string) (any, error)
	// Secret reports whether values of this kind go to the credential
	// store (true) or to the capability config in settings.toml (false).
	Secret() bool
}

// Kinds is an ordered list of field kinds; the first that accepts a field
// asks for it.
type Kinds []Kind

// DefaultKinds returns secret, enum, then text (which accepts anything).
func DefaultKinds() Kinds { return Kinds{SecretKind{}, EnumKind{}, TextKind{}} }

// For returns the kind that asks for f.
func (ks Kinds) For(f packaging.ConfigField) Kind {
	for _, k := range ks {
		if k.Accepts(f) {
			return k
		}
	}
	return TextKind{}
}

// SecretKind asks for a `secret: true` field with masked input and stores
// the answer in the credential store.
type SecretKind struct{}

func (SecretKind) Name() string                         { return "secret" }
func (SecretKind) Accepts(f packaging.ConfigField) bool { return f.Secret }
func (SecretKind) Secret() bool                         { return true }
func (SecretKind) Parse(_ packaging.ConfigField, a string) (any, error) {
	if a == "" {
		return nil, errors.New("the secret is empty")
	}
	return a, nil
}
func (SecretKind) Question(ext string, f packaging.ConfigField, problem string) yep.UIAskParams {
	return yep.UIAskParams{Prompt: question(ext, f, problem, "(input hidden; it is stored in the credential store)"), Secret: true}
}

// EnumKind offers an `enum` field's values as a selector.
type EnumKind struct{}

func (EnumKind) Name() string                         { return "enum" }
func (EnumKind) Accepts(f packaging.ConfigField) bool { return len(f.Enum) > 0 }
func (EnumKind) Secret() bool                         { return false }
func (EnumKind) Question(ext string, f packaging.ConfigField, problem string) yep.UIAskParams {
	return yep.UIAskParams{Prompt: question(ext, f, problem, ""), Options: f.Enum}
}

// Parse accepts one of the options (string enums as they are, other enum
// values as the JSON they are rendered as).
func (EnumKind) Parse(f packaging.ConfigField, a string) (any, error) {
	for _, o := range f.Enum {
		if o != a {
			continue
		}
		var v any
		if f.Type != "string" && json.Unmarshal([]byte(o), &v) == nil {
			return v, nil
		}
		return o, nil
	}
	return nil, fmt.Errorf("%q is not one of %s", a, strings.Join(f.Enum, ", "))
}

// TextKind reads free text and converts it to the field's JSON type.
type TextKind struct{}

func (TextKind) Name() string                       { return "text" }
func (TextKind) Accepts(packaging.ConfigField) bool { return true }
func (TextKind) Secret() bool                       { return false }
func (TextKind) Question(ext string, f packaging.ConfigField, problem string) yep.UIAskParams {
	p := yep.UIAskParams{Prompt: question(ext, f, problem, "")}
	if f.Type != "" && f.Type != "string" {
		p.Placeholder = f.Type
	}
	return p
}

// Parse converts by the field's type: integer, number, boolean, object and
// array parse; anything else is the text itself.
func (TextKind) Parse(f packaging.ConfigField, a string) (any, error) {
	switch f.Type {
	case "integer":
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", a)
		}
		return n, nil
	case "number":
		n, err := strconv.ParseFloat(a, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", a)
		}
		return n, nil
	case "boolean":
		switch strings.ToLower(a) {
		case "true", "yes", "y", "1":
			return true, nil
		case "false", "no", "n", "0":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not true or false", a)
	case "object", "array":
		var v any
		if err := json.Unmarshal([]byte(a), &v); err != nil {
			return nil, fmt.Errorf("not valid JSON for an %s: %v", f.Type, err)
		}
		return v, nil
	}
	return a, nil
}

func question(ext string, f packaging.ConfigField, problem, note string) string {
	var b strings.Builder
	if problem != "" {
		fmt.Fprintf(&b, "%s. ", problem)
	}
	fmt.Fprintf(&b, "Extension %s needs %s", ext, f.Name)
	if f.Description != "" {
		fmt.Fprintf(&b, " (%s)", f.Description)
	}
	if note != "" {
		b.WriteString(" " + note)
	}
	return b.String()
}

// MaxAttempts is how many answers setup takes for one field before it
// gives up.
const MaxAttempts = 3

// SetupResult says what setup asked and saved (names only, never values).
type SetupResult struct {
	// Saved lists the fields set, in order.
	Saved []string
	// Secrets lists which of them went to the credential store.
	Secrets []string
}

// Setup runs setup on enable: every required field that is unset is asked
// for through ask, by kind: secrets go to the credential store, everything
// else — validated against the schema — to the capability config in
// settings.toml. With ask nil and fields missing, it fails with a
// [MissingError] listing each field and how to set it.
//
// Setup is one transaction: nothing is written until every field has an
// accepted answer, and a failure at any point — a cancelled question, an
// answer refused too often, a write that fails — leaves connections.toml
// and settings.toml as they were (and an empty result).
func (r *Resolver) Setup(ctx context.Context, m *packaging.Manifest, ask host.AskSink) (*SetupResult, error) {
	ins, err := r.Inspect(ctx, m)
	if err != nil {
		return nil, err
	}
	out := &SetupResult{}
	if len(ins.Missing) == 0 {
		return out, nil
	}
	if ask == nil {
		return out, &MissingError{Ext: m.Name, Fields: ins.Missing, SettingsPath: r.SettingsPath}
	}
	kinds := r.Kinds
	if kinds == nil {
		kinds = DefaultKinds()
	}
	plain := map[string]any{}
	sec := map[string]secrets.Secret{}
	for i, f := range ins.Missing {
		k := kinds.For(f)
		v, err := r.askField(ctx, m, k, f, ask)
		if err != nil {
			rest := &MissingError{Ext: m.Name, Fields: ins.Missing[i:], SettingsPath: r.SettingsPath}
			return &SetupResult{}, fmt.Errorf("%w; nothing was saved\n%s", err, rest.Error())
		}
		if k.Secret() {
			s, _ := v.(string)
			sec[f.Name] = secrets.New(s)
			out.Secrets = append(out.Secrets, f.Name)
		} else {
			plain[f.Name] = v
		}
		out.Saved = append(out.Saved, f.Name)
	}
	if err := r.commit(ctx, m, ins.Fields, plain, out.Secrets, sec); err != nil {
		return &SetupResult{}, err
	}
	return out, nil
}

// commit writes what setup collected: the secrets (in the order of names)
// to the credential store, then the plain values to settings.toml in one
// locked update. When a write fails, the secrets already written are put
// back as they were, so a failed setup leaves both files unchanged.
func (r *Resolver) commit(ctx context.Context, m *packaging.Manifest, fields []packaging.ConfigField, plain map[string]any, names []string, sec map[string]secrets.Secret) error {
	var undo []func() error
	rollback := func(cause error) error {
		var errs []error
		for i := len(undo) - 1; i >= 0; i-- {
			if err := undo[i](); err != nil {
				errs = append(errs, err)
			}
		}
		if len(errs) > 0 {
			return fmt.Errorf("%w; putting back the secrets already saved also failed (check them with `yolop ext secret list %s`): %w", cause, m.Name, errors.Join(errs...))
		}
		return fmt.Errorf("%w; nothing was saved", cause)
	}
	for _, name := range names {
		prev, had, err := r.Secrets.Get(ctx, m.Name, name)
		if err != nil {
			return rollback(fmt.Errorf("extension %s: reading secret %s: %w", m.Name, name, err))
		}
		if err := r.Secrets.Set(ctx, m.Name, name, sec[name]); err != nil {
			return rollback(fmt.Errorf("extension %s: saving secret %s: %w", m.Name, name, err))
		}
		undo = append(undo, func() error {
			if had {
				return r.Secrets.Set(context.WithoutCancel(ctx), m.Name, name, prev)
			}
			_, err := r.Secrets.Delete(context.WithoutCancel(ctx), m.Name, name)
			return err
		})
	}
	if len(plain) == 0 {
		return nil
	}
	err := r.Settings.UpdateCapabilityConfig(ctx, m.Name, func(cfg map[string]any) (map[string]any, error) {
		if cfg == nil {
			cfg = map[string]any{}
		}
		for _, f := range fields {
			if f.Secret {
				delete(cfg, f.Name) // never write a secret to settings.toml
			}
		}
		maps.Copy(cfg, plain)
		return cfg, nil
	})
	if err != nil {
		return rollback(fmt.Errorf("extension %s: saving its config: %w", m.Name, err))
	}
	return nil
}

// askField asks until an answer parses and validates, at most MaxAttempts
// times.
func (r *Resolver) askField(ctx context.Context, m *packaging.Manifest, k Kind, f packaging.ConfigField, ask host.AskSink) (any, error) {
	problem := ""
	for range MaxAttempts {
		res, err := ask.Ask(ctx, "yolop", k.Question(m.Name, f, problem))
		if err != nil {
			return nil, fmt.Errorf("extension %s: asking for %s: %w", m.Name, f.Name, err)
		}
		if res.Cancelled {
			return nil, fmt.Errorf("extension %s: setup cancelled at field %s", m.Name, f.Name)
		}
		answer := strings.TrimSpace(res.Answer)
		v, err := k.Parse(f, answer)
		if err == nil {
			err = validateField(m, f.Name, v)
			if err != nil && k.Secret() {
				sc := NewScrubber()
				sc.Add(m.Name, f.Name, secrets.New(answer))
				err = errors.New(sc.Scrub(err.Error()))
			}
		}
		if err == nil {
			return v, nil
		}
		if k.Secret() {
			problem = "That was not accepted (" + err.Error() + ")"
		} else {
			problem = "Not accepted: " + err.Error()
		}
	}
	return nil, fmt.Errorf("extension %s: no acceptable value for %s after %d attempts (%s)", m.Name, f.Name, MaxAttempts, problem)
}

// validateField validates one value against the schema, keeping only the
// problems under that field (others are unset yet).
func validateField(m *packaging.Manifest, name string, v any) error {
	err := m.ValidateConfig(map[string]any{name: v})
	if err == nil {
		return nil
	}
	_, detail, ok := strings.Cut(err.Error(), "invalid config: ")
	if !ok {
		return err
	}
	var mine []string
	for _, p := range strings.Split(detail, "; ") {
		if p == name || strings.HasPrefix(p, name+":") || strings.HasPrefix(p, name+".") || strings.HasPrefix(p, name+"[") {
			mine = append(mine, p)
		}
	}
	if len(mine) == 0 {
		return nil
	}
	return errors.New(strings.Join(mine, "; "))
}

// A LineAsker is a [host.AskSink] for a command on a terminal: it writes
// the question to Out and reads one line from In. A secret question is read
// with ReadSecret (echo off) and acknowledged with "(saved)"; an
// options question lists numbered options and takes a number or a value.
type LineAsker struct {
	In  *bufio.Reader
	Out io.Writer
	// ReadSecret reads the answer to a secret question with echo off (a
	// terminal: golang.org/x/term's ReadPassword). Nil means the answer is
	// read from In like any other (not a terminal).
	ReadSecret func() (string, error)

	mu sync.Mutex
}

// Ask implements [host.AskSink].
func (a *LineAsker) Ask(ctx context.Context, ext string, p yep.UIAskParams) (yep.UIAskResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	fmt.Fprintf(a.Out, "%s", p.Prompt)
	for i, o := range p.Options {
		fmt.Fprintf(a.Out, "\n  %d) %s", i+1, o)
	}
	switch {
	case len(p.Options) > 0:
		fmt.Fprint(a.Out, "\nchoose a number: ")
	case p.Placeholder != "":
		fmt.Fprintf(a.Out, " [%s]: ", p.Placeholder)
	default:
		fmt.Fprint(a.Out, ": ")
	}
	var line string
	var err error
	if p.Secret && a.ReadSecret != nil {
		line, err = a.ReadSecret()
		fmt.Fprintln(a.Out)
	} else {
		line, err = a.In.ReadString('\n')
	}
	if err != nil && line == "" {
		return yep.UIAskResult{Cancelled: true}, nil
	}
	answer := strings.TrimRight(line, "\r\n")
	if n, err := strconv.Atoi(strings.TrimSpace(answer)); err == nil && n >= 1 && n <= len(p.Options) {
		answer = p.Options[n-1]
	}
	if p.Secret {
		fmt.Fprintln(a.Out, "(saved)")
	}
	return yep.UIAskResult{Answer: answer}, nil
}
