package provider

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// The kinds of failure. Every error [Provider.Stream] returns is an
// [*Error] matching one of them with errors.Is.
var (
	// ErrAuth: the provider refused the API key (401 or 403).
	ErrAuth = errors.New("provider: the API key was refused")
	// ErrRateLimited: 429, still, after the SDK's retries.
	ErrRateLimited = errors.New("provider: rate-limited")
	// ErrServer: the provider failed (5xx) after the SDK's retries.
	ErrServer = errors.New("provider: server error")
	// ErrContextTooLong: the conversation does not fit the model's
	// context window; the loop can compact it and ask again.
	ErrContextTooLong = errors.New("provider: the conversation is too long for the model's context window")
	// ErrStreamDropped: the stream broke off before the turn finished;
	// the Result returned with it holds what was received.
	ErrStreamDropped = errors.New("provider: the stream broke off")
	// ErrBadRequest: the provider refused the request (another 4xx).
	ErrBadRequest = errors.New("provider: request refused")
	// ErrUnreachable: no answer from the provider at all (connection
	// refused, DNS, TLS, a timeout).
	ErrUnreachable = errors.New("provider: unreachable")
)

// An Error is a failed turn. Its message is meant for a person; Kind is for
// code (errors.Is(err, ErrRateLimited) matches through it).
type Error struct {
	// Provider is the provider's name.
	Provider string
	// Kind is one of the sentinels above.
	Kind error
	// Status is the HTTP status, 0 when there was none.
	Status int
	// Code is the API's error code or type, when it sent one.
	Code string
	// RetryAfter is the last 429's Retry-After header, when it had one.
	RetryAfter string
	// Msg is the whole message [Error.Error] returns. It never holds the
	// API key.
	Msg string
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns Kind. The SDK's error is deliberately not kept: it holds
// the HTTP request, whose headers carry the key.
func (e *Error) Unwrap() error { return e.Kind }

// apiFailure is what the classifier needs from an SDK's API error.
type apiFailure struct {
	status     int
	code       string // error code or type
	message    string // the API's own message
	retryAfter string
}

// classify turns an API failure into an [*Error].
func (p *base) classify(f apiFailure) *Error {
	e := &Error{Provider: p.name, Status: f.status, Code: f.code, RetryAfter: f.retryAfter}
	status := fmt.Sprintf("%d %s", f.status, http.StatusText(f.status))
	detail := ""
	if m := strings.TrimRight(p.scrub(strings.TrimSpace(f.message)), "."); m != "" {
		detail = ": " + clip(m)
	}
	switch {
	case f.status == http.StatusUnauthorized || f.status == http.StatusForbidden:
		e.Kind = ErrAuth
		switch {
		case p.keyEnv == "":
			e.Msg = fmt.Sprintf("the %s API refused the request (%s)%s", p.name, status, detail)
		case p.key == "":
			e.Msg = fmt.Sprintf("the %s API refused the request (%s): no API key is set; set %s", p.name, status, p.keyEnv)
		default:
			e.Msg = fmt.Sprintf("the %s API refused the key (%s): check the API key (%s)", p.name, status, p.keyEnv)
		}
	case isContextTooLong(f):
		e.Kind = ErrContextTooLong
		e.Msg = fmt.Sprintf("the conversation is too long for the model's context window (%s %s)%s", p.name, status, detail)
	case f.status == http.StatusTooManyRequests:
		e.Kind = ErrRateLimited
		wait := "wait a moment"
		if f.retryAfter != "" && f.retryAfter != "0" {
			wait = "wait " + retryAfterText(f.retryAfter) + " as its Retry-After asks"
		}
		e.Msg = fmt.Sprintf("the %s API is rate-limiting requests (429%s) after %s; %s, then try again, or check the account's limits", p.name, detail, p.attempts(), wait)
	case f.status >= 500:
		e.Kind = ErrServer
		e.Msg = fmt.Sprintf("the %s provider failed (%s%s) after %s; try again", p.name, status, detail, p.attempts())
	default:
		e.Kind = ErrBadRequest
		e.Msg = fmt.Sprintf("the %s API refused the request (%s)%s", p.name, status, detail)
	}
	return e
}

func isContextTooLong(f apiFailure) bool {
	if f.code == "context_length_exceeded" {
		return true
	}
	if f.status != http.StatusBadRequest && f.status != http.StatusRequestEntityTooLarge {
		return false
	}
	m := strings.ToLower(f.message)
	// Anthropic: "prompt is too long"; OpenAI-compatible servers (vLLM,
	// llama.cpp) say "maximum context length" or "exceeds the context".
	for _, s := range []string{"prompt is too long", "maximum context length", "context length exceeded", "exceeds the context"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// retryAfterText is a Retry-After value, seconds or an HTTP date, as text.
func retryAfterText(v string) string {
	if _, err := strconv.Atoi(v); err == nil {
		return v + "s"
	}
	return "until " + v
}

// dropped is the error of a stream that broke off after res was received.
func (p *base) dropped(res Result, why string) *Error {
	got := fmt.Sprintf("%d bytes of text and %d complete tool calls", len(res.Text), len(res.ToolCalls))
	return &Error{Provider: p.name, Kind: ErrStreamDropped,
		Msg: fmt.Sprintf("the stream from the %s API broke off after %s: %s; try again", p.name, got, clip(p.scrub(why)))}
}

// unreachable is the error of a request that got no HTTP answer.
func (p *base) unreachable(err error) *Error {
	hint := "check the base URL and the network"
	if p.urlEnv != "" {
		hint = fmt.Sprintf("check the base URL (%s) and the network", p.urlEnv)
	}
	return &Error{Provider: p.name, Kind: ErrUnreachable,
		Msg: fmt.Sprintf("could not reach the %s API at %s: %s; %s", p.name, p.scrub(p.baseURL), clip(p.scrub(err.Error())), hint)}
}

// scrub removes the key from s.
func (p *base) scrub(s string) string {
	if p.key == "" {
		return s
	}
	return strings.ReplaceAll(s, p.key, "[redacted]")
}

func clip(s string) string {
	const max = 300
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
