"""An OpenAI-compatible Chat Completions endpoint written only from the
API's public shape, independent of the Go scripted server: it answers one
POST /v1/chat/completions with one streamed completion (text, one tool call
whose arguments arrive in pieces, a finish chunk, a usage chunk, [DONE]),
then exits. It prints "PORT <n>" on stdout once it is listening.

It answers 400 unless the request carries a bearer key and asks for a
stream with usage, so the client side is checked too.
"""

import http.server
import json
import sys


def chunk(choices, usage=None):
    return {
        "id": "chatcmpl-independent",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "independent-model",
        "system_fingerprint": None,
        "service_tier": "default",
        "choices": choices,
        "usage": usage,
    }


def delta(d, finish=None):
    return [{"index": 0, "delta": d, "logprobs": None, "finish_reason": finish}]


EVENTS = [
    chunk(delta({"role": "assistant", "content": "", "refusal": None})),
    chunk(delta({"content": "Sunny"})),
    chunk(delta({"content": " in"})),
    chunk(delta({"content": " Paris."})),
    chunk(delta({"tool_calls": [{"index": 0, "id": "call_abc", "type": "function",
                                 "function": {"name": "get_weather", "arguments": ""}}]})),
    chunk(delta({"tool_calls": [{"index": 0, "function": {"arguments": "{\"ci"}}]})),
    chunk(delta({"tool_calls": [{"index": 0, "function": {"arguments": "ty\": \"Par"}}]})),
    chunk(delta({"tool_calls": [{"index": 0, "function": {"arguments": "is\"}"}}]})),
    chunk(delta({}, finish="tool_calls")),
    chunk([], usage={"prompt_tokens": 17, "completion_tokens": 9, "total_tokens": 26,
                     "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                     "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                                   "accepted_prediction_tokens": 0,
                                                   "rejected_prediction_tokens": 0}}),
]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        problem = self.problem(body)
        if problem:
            data = json.dumps({"error": {"message": problem, "type": "invalid_request_error",
                                         "param": None, "code": None}}).encode()
            self.send_response(400)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for ev in EVENTS:
            self.wfile.write(b"data: " + json.dumps(ev).encode() + b"\n\n")
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True

    def problem(self, body):
        if self.path != "/v1/chat/completions":
            return "unexpected path " + self.path
        if not self.headers.get("Authorization", "").startswith("Bearer "):
            return "missing bearer key"
        try:
            req = json.loads(body)
        except ValueError as e:
            return "body is not JSON: %s" % e
        if req.get("stream") is not True:
            return "expected stream: true"
        if not (req.get("stream_options") or {}).get("include_usage"):
            return "expected stream_options.include_usage"
        if not req.get("messages"):
            return "expected messages"
        return None

    def log_message(self, *args):
        pass


def main():
    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    print("PORT", server.server_address[1], flush=True)
    server.handle_request()
    server.server_close()


if __name__ == "__main__":
    sys.exit(main())
