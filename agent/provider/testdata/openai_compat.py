"""A second OpenAI-compatible Chat Completions server, written only from the
API's public shape (platform.openai.com/docs/api-reference/chat) and sharing
nothing with the Go scripted server, so a test can show the provider does
not depend on that server's quirks. Standard library only.

Usage: python3 openai_compat.py KEY

It listens on 127.0.0.1 on a free port and prints the port number alone on
stdout's first line, then serves until killed. POST /v1/chat/completions
needs "Authorization: Bearer KEY" (401 otherwise, in the API's error shape)
and answers as one JSON chat.completion, or with "stream": true as
server-sent events: a role chunk, content deltas, tool_calls deltas (index,
id, type and function name first, then the arguments in fragments), a
finish_reason chunk, a usage chunk when stream_options.include_usage is
true, and "data: [DONE]".

The answer is a function of the request:
  - the last message is a user message and tools are offered: call every
    offered tool the message names, or the first offered tool when it names
    none, in parallel; each call's arguments hold its schema's required
    properties, each set to the first of its "enum", else by type: a string
    "test <property>", an integer 1, a number 0.5, a boolean true, an array
    [], an object {}. Call ids are call_<n>_<i>: n counts the request's
    assistant messages from 1, i the calls from 0.
  - the last message is a tool result: text quoting the trailing results in
    order, each as <tool> said "<content>" joined by "; ", ending in ".".
  - otherwise: "You said: " and the last message's text.
A token is a whitespace-separated word: prompt_tokens counts those of every
message's text and tool-call arguments, cached_tokens those of the leading
system messages (the stable prefix a prompt cache would hold),
completion_tokens those of the reply's text and arguments. A text reply
longer than max_completion_tokens (or max_tokens) words is cut there with
finish_reason "length". Replies name the model as the request's with
"-2024-08-06" appended, as the API answers with a dated snapshot.

Requests the API refuses get 400 in its error shape: no model, no
messages, an unknown role, a tool message that answers no pending call, or
a call left without a tool message before the next message.
"""

import hashlib
import http.server
import json
import re
import sys

CREATED = 1700000000
FRAGMENT = 7  # characters of arguments per tool_calls delta


def text_of(content):
    """A message's text: content is a string, null, or a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content if p.get("type") == "text")


def words(s):
    return len(s.split())


def example(schema, prop):
    if schema.get("enum"):
        return schema["enum"][0]
    return {
        "string": "test " + prop,
        "integer": 1,
        "number": 0.5,
        "boolean": True,
        "array": [],
        "object": {},
    }.get(schema.get("type"), None)


def arguments(params):
    params = params or {}
    props = params.get("properties") or {}
    return json.dumps({p: example(props.get(p) or {}, p) for p in params.get("required") or []})


class Refusal(Exception):
    def __init__(self, status, message, code=None):
        super().__init__(message)
        self.status, self.message, self.code = status, message, code


def check(req):
    """Refuses, as the API does, a request it would not accept."""
    if not req.get("model"):
        raise Refusal(400, "you must provide a model parameter")
    msgs = req.get("messages")
    if not msgs:
        raise Refusal(400, "[] is too short - 'messages'")
    pending = []  # tool_call_ids not answered yet
    for i, m in enumerate(msgs):
        role = m.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool"):
            raise Refusal(400, "Invalid value: '%s'. Supported values are: 'system', 'assistant', "
                          "'user', 'tool', and 'developer'." % role)
        if role == "tool":
            if m.get("tool_call_id") not in pending:
                raise Refusal(400, "Invalid parameter: messages with role 'tool' must be a response "
                              "to a preceeding message with 'tool_calls'.")
            pending.remove(m["tool_call_id"])
            continue
        if pending:
            raise Refusal(400, "An assistant message with 'tool_calls' must be followed by tool "
                          "messages responding to each 'tool_call_id'. The following tool_call_ids "
                          "did not have response messages: %s" % ", ".join(pending))
        if role == "assistant":
            pending = [c["id"] for c in m.get("tool_calls") or []]
    if pending:
        raise Refusal(400, "An assistant message with 'tool_calls' must be followed by tool "
                      "messages responding to each 'tool_call_id'. The following tool_call_ids "
                      "did not have response messages: %s" % ", ".join(pending))


def answer(req):
    """Returns (text, tool calls as (id, name, arguments), finish_reason)."""
    msgs = req["messages"]
    last = msgs[-1]
    tools = [t["function"] for t in req.get("tools") or [] if t.get("type") == "function"]
    if last["role"] == "tool":
        names = {}
        for m in msgs:
            for c in m.get("tool_calls") or []:
                names[c["id"]] = c["function"]["name"]
        results = []
        for m in reversed(msgs):
            if m["role"] != "tool":
                break
            results.insert(0, '%s said "%s"' % (names[m["tool_call_id"]], text_of(m.get("content"))))
        return "; ".join(results) + ".", [], "stop"
    said = text_of(last.get("content"))
    if last["role"] == "user" and tools:
        chosen = [t for t in tools if t["name"] in said] or tools[:1]
        turn = 1 + sum(1 for m in msgs if m["role"] == "assistant")
        calls = [("call_%d_%d" % (turn, i), t["name"], arguments(t.get("parameters")))
                 for i, t in enumerate(chosen)]
        return "", calls, "tool_calls"
    text = "You said: " + said
    cap = req.get("max_completion_tokens") or req.get("max_tokens")
    if cap and words(text) > cap:
        return " ".join(text.split()[:cap]), [], "length"
    return text, [], "stop"


def usage(req, text, calls):
    prompt = cached = 0
    leading = True
    for m in req["messages"]:
        n = words(text_of(m.get("content")))
        n += sum(words(c["function"]["arguments"]) for c in m.get("tool_calls") or [])
        prompt += n
        leading = leading and m["role"] in ("system", "developer")
        if leading:
            cached += n
    completion = words(text) + sum(words(a) for _, _, a in calls)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                      "accepted_prediction_tokens": 0,
                                      "rejected_prediction_tokens": 0},
    }


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path != "/v1/chat/completions":
            return self.error(404, "Invalid URL (POST %s)" % self.path)
        auth = self.headers.get("Authorization")
        if not auth:
            return self.error(401, "You didn't provide an API key. You need to provide your API key "
                              "in an Authorization header using Bearer auth (i.e. Authorization: "
                              "Bearer YOUR_KEY).")
        if auth != "Bearer " + self.server.key:
            return self.error(401, "Incorrect API key provided.", "invalid_api_key")
        try:
            req = json.loads(body)
            check(req)
        except ValueError:
            return self.error(400, "We could not parse the JSON body of your request.")
        except Refusal as r:
            return self.error(r.status, r.message, r.code)
        text, calls, finish = answer(req)
        meta = {
            "id": "chatcmpl-" + hashlib.sha256(body).hexdigest()[:24],
            "created": CREATED,
            "model": req["model"] + "-2024-08-06",
            "system_fingerprint": "fp_compat",
        }
        use = usage(req, text, calls)
        if req.get("stream"):
            self.stream(meta, text, calls, finish, use, (req.get("stream_options") or {}).get("include_usage"))
        else:
            self.whole(meta, text, calls, finish, use)

    def whole(self, meta, text, calls, finish, use):
        msg = {"role": "assistant", "content": text or None, "refusal": None}
        if calls:
            msg["tool_calls"] = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                                 for i, n, a in calls]
        self.json(200, dict(meta, object="chat.completion", usage=use, choices=[
            {"index": 0, "message": msg, "logprobs": None, "finish_reason": finish}]))

    def stream(self, meta, text, calls, finish, use, include_usage):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

        def send(choices, **extra):
            chunk = dict(meta, object="chat.completion.chunk", choices=choices, **extra)
            if include_usage and "usage" not in extra:
                chunk["usage"] = None
            self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            self.wfile.flush()

        def delta(d, finish_reason=None):
            send([{"index": 0, "delta": d, "logprobs": None, "finish_reason": finish_reason}])

        delta({"role": "assistant", "content": "", "refusal": None})
        for piece in re.findall(r"\s*\S+", text):
            delta({"content": piece})
        for i, (call_id, name, args) in enumerate(calls):
            delta({"tool_calls": [{"index": i, "id": call_id, "type": "function",
                                   "function": {"name": name, "arguments": ""}}]})
            for at in range(0, len(args), FRAGMENT):
                delta({"tool_calls": [{"index": i, "function": {"arguments": args[at:at + FRAGMENT]}}]})
        delta({}, finish)
        if include_usage:
            send([], usage=use)
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def error(self, status, message, code=None):
        self.json(status, {"error": {"message": message, "type": "invalid_request_error",
                                     "param": None, "code": code}})

    def json(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: openai_compat.py KEY")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.key = sys.argv[1]
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
