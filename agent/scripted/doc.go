// Package scripted is a scripted model: a real OpenAI-compatible HTTP
// endpoint on loopback that answers from a script instead of a model.
//
// A [Server] speaks OpenAI's Chat Completions API (POST
// /v1/chat/completions, streamed as server-sent events when the request
// says "stream": true, as one JSON body otherwise), Anthropic's Messages API
// (POST /v1/messages, the same way) and GET /v1/models, so a provider built
// on an official SDK talks to it exactly as it talks to the real service:
// the agent's tests drive their real clients over real HTTP against it, and
// `yolop demo` runs a real agent turn with no API key and no network. The
// same script answers either API. Point openai-go at URL()+"/v1/" and
// anthropic-sdk-go at URL()+"/".
//
// # Script
//
// A [Script] is JSON: an ordered list of steps. Each request is matched
// against the next step that has not answered yet; a step that matches
// answers and the script moves on. A request that does not match is
// answered 400 in OpenAI's error shape with a message naming the step, what
// it expected and what the request ended with, and the script does not
// move; so does a request that comes after the last step.
//
//	{
//	  "model": "scripted",
//	  "steps": [
//	    {
//	      "name": "look for a tool",
//	      "when": {"user": "count to three"},
//	      "reply": {
//	        "text": "Let me find a tool for that.",
//	        "tool_calls": [{"name": "tool_search", "arguments": {"query": "count"}}]
//	      }
//	    },
//	    {
//	      "when": {"tool_result": {"tool": "tool_search", "contains": "count"}, "offered": ["count"]},
//	      "reply": {
//	        "tool_calls": [
//	          {"name": "count", "arguments": {"to": 3}},
//	          {"name": "clock", "arguments": {}}
//	        ],
//	        "usage": {"prompt_tokens": 812, "completion_tokens": 31, "cached_tokens": 768}
//	      }
//	    },
//	    {"when": {"any": true}, "reply": {"text": "1 2 3", "finish_reason": "stop"}}
//	  ]
//	}
//
// "model" (optional, default "scripted") is the model GET /v1/models lists.
// A completion reports the model the request named.
//
// A step's "when" holds exactly one of:
//
//   - "user": the request's last message is a user message whose text
//     contains this string ("" matches any user message).
//   - "tool_result": {"tool", "contains"}: the request ends with tool
//     results (the messages after the last assistant message), and one of
//     them answers a call of "tool" (empty: any tool) and its text contains
//     "contains" (empty: anything). The tool's name comes from the assistant
//     message whose tool call the result answers, as the wire carries only
//     the call's id.
//   - "any": true: any request.
//
// and may add "offered": a list of tool names the request must offer in
// its "tools" (for a tool the model found through a search, say).
//
// A step's "reply" has "text" and/or "tool_calls"; several tool calls are
// parallel calls. A tool call has a "name", "arguments" (a JSON value sent
// as the call's arguments; a JSON string is sent verbatim, so a script can
// send arguments that are not valid JSON) and an optional "id" (default
// call_<step>_<n>, both counted from 1). "finish_reason" defaults to
// "tool_calls" when there are tool calls and "stop" otherwise; "length" and
// "content_filter" are also accepted. "usage" gives "prompt_tokens",
// "completion_tokens" and optionally "cached_tokens" (reported under
// prompt_tokens_details); without it, both counts are estimated at four
// bytes a token of the request body and of the reply.
//
// A reply may instead be a failure: "error": {"status", "type", "code",
// "message"} answers with that HTTP error in the API's error shape (status
// defaults to 500, type to one chosen from the status); a client that
// retries it sends its retry to the next step. "stream_error": "message"
// streams the text and tool calls, then an error event instead of the
// finish, usage and [DONE] (a request that is not streamed gets a 500 with
// the message).
//
// A step with "repeat": true answers every request it matches; the script
// moves past it when a request does not match it but matches the next step.
//
// # Streaming
//
// A streamed reply is sent as the real API sends one: a first chunk with
// the assistant role, the text in word-sized deltas, then each tool call in
// turn (a chunk with its index, id, type and name and empty arguments, then
// its arguments in pieces of a few bytes), a chunk with the finish reason,
// a chunk with the usage and no choices when the request set
// stream_options.include_usage, and finally "data: [DONE]".
//
// # Anthropic
//
// On /v1/messages a reply is a message whose content is a text block and
// one tool_use block per tool call (arguments that are not a JSON object
// are sent as {"arguments": "<them>"}, since a tool_use input is always an
// object); the finish reason maps to the stop reason (stop → end_turn,
// tool_calls → tool_use, length → max_tokens, content_filter → refusal);
// usage maps to input_tokens (prompt less cached), cache_read_input_tokens
// and output_tokens. "user" matches the text of a last user message
// without tool_result blocks, "tool_result" the tool_result blocks of the
// last user message. A stream is message_start, ping, each block's
// content_block_start/delta/stop (text_delta by word, input_json_delta in
// pieces), message_delta and message_stop; a "stream_error" ends it with
// an error event. Errors are in Anthropic's shape ({"type": "error",
// "error": {"type", "message"}}), typed from the status unless the script
// names one of Anthropic's types; a key is accepted as a bearer token or
// in x-api-key.
//
// # Checks
//
// Beyond matching, the server refuses with 400, as the real APIs do, a
// request without a model or messages (or, on /v1/messages, max_tokens),
// stream_options without stream, a tool result that does not answer a
// tool call of the assistant message before it, and an assistant tool call
// left without a result answering it. Every
// request is recorded ([Server.Requests]) with what the client sent and the
// status it got. [Options] add an API key check (401) and 429 answers with
// Retry-After for the first requests, so a client's error and retry paths
// can be exercised.
package scripted
