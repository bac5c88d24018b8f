"""The capability server: a registry of handlers served over YEP on asyncio.

Create a Server, register handlers, then call serve(). Each request runs as
its own asyncio task, so many calls are in flight at once; the host's cancel
cancels the task (the handler sees asyncio.CancelledError) and the call is
answered with -32800. Messages are read one JSON object per line from stdin
and written to stdout; nothing else may write to stdout.
"""
import asyncio
import fnmatch
import inspect
import json
import os
import sys
import threading
import traceback
from typing import Any, Awaitable, Callable, Dict, List, Optional, Union

from . import _meta
from ._wire import (
    CommandExecuteResult,
    HookFireResult,
    InitializeParams,
    InitializeResult,
    PromptContributionParams,
    ToolResult,
    TraceEventParams,
    UIAskResult,
)

ENVELOPE = ("jsonrpc", "id", "method", "params", "result", "error")
MAX_QUEUED_EVENTS = 1024


class YepError(Exception):
    """A protocol-level error, answered to the host as a JSON-RPC error.

    Raise it from a handler to fail the request itself rather than report a
    tool-level or command-level failure."""

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data

    def wire(self) -> Dict[str, Any]:
        e: Dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            e["data"] = self.data
        return e


class ToolError(Exception):
    """A tool failure the agent should read: the result has is_error set and
    the exception text as output. Any other exception does the same; this one
    says it on purpose."""


class SDKError(Exception):
    """A server-to-host method could not be sent."""


class NotDeclaredError(SDKError):
    """The server did not opt into the method (Server(status=True), ...), or
    a tool that was not registered streaming sent tool/update."""


class NotAdvertisedError(SDKError):
    """The host did not advertise the capability the method needs."""


class NotInitializedError(SDKError):
    """The handshake has not completed yet."""


def allow() -> HookFireResult:
    """A hook decision: let the call (or its result) through."""
    return {"decision": _meta.DECISION_ALLOW}


def block(reason: str) -> HookFireResult:
    """A hook decision: refuse the call, or withhold its result; the agent
    reads reason."""
    return {"decision": _meta.DECISION_BLOCK, "reason": str(reason)}


_UNSET: Any = object()


def mutate(args: Any = _UNSET, result: Optional[ToolResult] = None, reason: str = "") -> HookFireResult:
    """A hook decision: run the call with other arguments (pre_tool_use) or
    hand the agent another result (post_tool_use)."""
    d: HookFireResult = {"decision": _meta.DECISION_MUTATE}
    if reason:
        d["reason"] = str(reason)
    if args is not _UNSET:
        d["args"] = args
    if result is not None:
        d["result"] = result
    return d


async def _settle(v: Any) -> Any:
    """v, awaited when it is awaitable: handlers may be sync or async."""
    if inspect.isawaitable(v):
        return await v
    return v


def _q(s: Any) -> str:
    """s quoted as Go's %q does, near enough for messages."""
    return json.dumps(str(s), ensure_ascii=False)


class ToolCall:
    """One tool invocation handed to a tool handler."""

    def __init__(self, server: "Server", request_id: Union[int, str], params: Dict[str, Any], streaming: bool):
        self.id: str = _opt_str(params, "tool_call_id")
        """The host's tool_call_id."""
        self.name: str = _opt_str(params, "name")
        """The tool name."""
        args = params.get("args")
        self.args: Any = {} if args is None else args
        """The decoded JSON arguments; {} when the host sent none."""
        self.session_id: str = _opt_str(params, "session_id")
        self.request_id = request_id
        """The JSON-RPC id of the tool/call request (tool/update carries it as request_id)."""
        self.traceparent: str = _opt_str(params, "traceparent")
        self.tracestate: str = _opt_str(params, "tracestate")
        self._server = server
        self._streaming = streaming
        self._key = json.dumps(request_id)

    def update(self, output: str = "", data: Any = None) -> bool:
        """Streams a chunk of partial output as tool/update, delivered before
        the result. Raises NotDeclaredError when the tool was not registered
        with streaming=True; returns False (nothing sent) when the host did
        not advertise "streaming" or has cancelled the call, True once
        sent."""
        p: Dict[str, Any] = {}
        if output:
            p["output"] = str(output)
        if data is not None:
            p["data"] = data
        return self._send(p)

    def progress(self, current: float, total: float = 0, message: str = "") -> bool:
        """Reports progress as tool/update, with the rules of update(); total
        is 0 when unknown."""
        prog: Dict[str, Any] = {"current": current}
        if total:
            prog["total"] = total
        if message:
            prog["message"] = str(message)
        return self._send({"progress": prog})

    def _send(self, p: Dict[str, Any]) -> bool:
        if not self._streaming:
            raise NotDeclaredError("tool %s: tool/update is not declared: register the tool with streaming=True" % _q(self.name))
        caps = self._server._host_caps
        if caps is None:
            raise NotInitializedError("tool %s: tool/update before the handshake" % _q(self.name))
        if _meta.CAP_STREAMING not in caps or self._key in self._server._cancelled:
            return False  # not streamed by this host, or the call is over (cancelled)
        msg: Dict[str, Any] = {"request_id": self.request_id}
        if self.id:
            msg["tool_call_id"] = self.id
        msg.update(p)
        self._server._notify(_meta.METHOD_TOOL_UPDATE, msg)
        return True


class HookEvent:
    """One hook firing handed to a hook handler."""

    def __init__(self, event: str, tool_name: str, payload: Dict[str, Any]):
        self.event = event
        """The hook event, e.g. "pre_tool_use"."""
        self.tool_name = tool_name
        """The tool the event concerns."""
        self.matcher = ""
        """The glob of the subscription that fired."""
        self.tool_call_id: str = _opt_str(payload, "tool_call_id")
        args = payload.get("args")
        self.args: Any = {} if args is None else args
        """The call's decoded arguments (already mutated by this server's
        earlier subscriptions, if any)."""
        self.result: Optional[ToolResult] = payload.get("result")
        """The tool's result, for post_tool_use; None otherwise."""


def _opt_str(params: Dict[str, Any], key: str) -> str:
    v = params.get(key)
    if v is None:
        return ""
    if not isinstance(v, str):
        raise YepError(_meta.CODE_INVALID_PARAMS, "invalid params: %s must be a string" % key)
    return v


def _opt_obj(params: Dict[str, Any], key: str) -> Dict[str, Any]:
    v = params.get(key)
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise YepError(_meta.CODE_INVALID_PARAMS, "invalid params: %s must be an object" % key)
    return v


def _is_id(v: Any) -> bool:
    return isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool))


def _parse_version(s: str):
    major, dot, minor = s.strip().partition(".")
    if not dot:
        minor = "0"
    if not (major.isdigit() and minor.isdigit() and len(major) <= 9 and len(minor) <= 9 and major.isascii() and minor.isascii()):
        raise ValueError("protocol version %s: want MAJOR.MINOR, e.g. %s" % (_q(s), _q(_meta.PROTOCOL_VERSION)))
    return int(major), int(minor)


ToolHandler = Callable[[ToolCall], Union[Any, Awaitable[Any]]]
HookHandler = Callable[[HookEvent], Union[Optional[HookFireResult], Awaitable[Optional[HookFireResult]]]]


class _Tool:
    def __init__(self, name: str, handler: ToolHandler, streaming: bool):
        self.name, self.handler, self.streaming = name, handler, streaming


class _Hook:
    def __init__(self, event: str, matcher: str, handler: HookHandler, timeout_ms: int, on_error: str):
        self.event, self.matcher, self.handler = event, matcher, handler
        self.timeout_ms, self.on_error = timeout_ms, on_error

    def matches(self, tool_name: str) -> bool:
        return self.matcher == "*" or fnmatch.fnmatchcase(tool_name, self.matcher)


class Server:
    """A capability server built from handlers.

    name and version identify it (they label logs and errors and go into the
    initialize result). status, ui_ask and log opt into the server-to-host
    methods status/changed, ui/ask and log: the manifest declares them too,
    and each is sent only when the host advertised it as well. A Server
    serves one connection in its lifetime.
    """

    def __init__(self, name: str, version: str, *, status: bool = False, ui_ask: bool = False, log: bool = False):
        self.name, self.version = name, version
        self._opt_status, self._opt_ui_ask, self._opt_log = status, ui_ask, log
        self._tools: Dict[str, _Tool] = {}
        self._hooks: List[_Hook] = []
        self._static_prompt: Optional[str] = None
        self._dynamic_prompt: Optional[Callable[[PromptContributionParams], Any]] = None
        self._commands: Dict[str, tuple] = {}
        self._mcp_servers: List[Dict[str, Any]] = []
        self._on_config: Optional[Callable[[Any], Any]] = None
        self._on_config_changed: Optional[Callable[[Any], Any]] = None
        self._on_trace: Optional[Callable[[TraceEventParams], Any]] = None
        self._on_workspace: Optional[Callable[[str], Any]] = None
        self._on_initialized: Optional[Callable[[], Any]] = None
        self._frozen = False
        # Connection state.
        self._init: Optional[InitializeParams] = None
        self._host_caps: Optional[frozenset] = None
        self._shutdown = False
        self._inflight: Dict[str, asyncio.Task] = {}
        self._cancelled: set = set()
        self._pending: Dict[int, asyncio.Future] = {}
        self._next_id = 0
        self._write: Optional[Callable[[bytes], None]] = None
        self._write_lock = threading.Lock()
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._events: Optional[asyncio.Queue] = None
        self._done: Optional[asyncio.Event] = None

    # ----------------------------------------------------------------- registry

    def _check_open(self, what: str) -> None:
        if self._frozen:
            raise RuntimeError("yolop_sdk: %s called after serving started; register every handler before serving" % what)

    def tool(self, name: str, handler: Optional[ToolHandler] = None, streaming: bool = False):
        """Registers a tool; the server announces "tools" (and "streaming"
        when streaming is True) and lists name in capability_params.tools.
        handler(call) returns the text the agent reads, or a ToolResult
        dict; raising fails the call with is_error set. Without handler it
        is a decorator."""
        if handler is None:
            return lambda h: (self.tool(name, h, streaming), h)[1]
        self._check_open("tool(%s)" % _q(name))
        if not name or not callable(handler):
            raise ValueError("yolop_sdk: tool needs a name and a handler")
        if name in self._tools:
            raise ValueError("yolop_sdk: tool %s is registered twice; tool names must be unique" % _q(name))
        self._tools[name] = _Tool(name, handler, streaming)
        return handler

    def on_hook(self, event: str, matcher: str, handler: Optional[HookHandler] = None, *, timeout_ms: int = 0, on_error: str = ""):
        """Subscribes handler to a hook event (e.g. "pre_tool_use") for the
        tools whose name matches the glob matcher ("*" matches every tool).
        handler(event) returns allow(), block(reason), mutate(...) or None
        (allow). timeout_ms and on_error ("warn" or "block") are the
        subscription's policy, enforced by the host. Without handler it is a
        decorator."""
        if handler is None:
            return lambda h: (self.on_hook(event, matcher, h, timeout_ms=timeout_ms, on_error=on_error), h)[1]
        self._check_open("on_hook(%s, %s)" % (_q(event), _q(matcher)))
        if not event or not matcher or not callable(handler):
            raise ValueError('yolop_sdk: on_hook needs an event, a matcher ("*" for every tool) and a handler')
        if on_error and on_error not in ("warn", "block"):
            raise ValueError('yolop_sdk: on_hook(%s, %s): on_error is %s; want "warn" or "block"' % (_q(event), _q(matcher), _q(on_error)))
        if any(h.event == event and h.matcher == matcher for h in self._hooks):
            raise ValueError("yolop_sdk: hook %s %s is registered twice" % (event, _q(matcher)))
        self._hooks.append(_Hook(event, matcher, handler, timeout_ms, on_error))
        return handler

    def prompt(self, text: str) -> None:
        """Sets the static system-prompt contribution sent in the handshake;
        the server announces "prompt"."""
        self._check_open("prompt")
        self._static_prompt = text

    def dynamic_prompt(self, fn: Callable[[PromptContributionParams], Any]):
        """Sets fn(params) -> str, called (prompt/contribution, at most once a
        turn) for this turn's contribution; the server announces "prompt" and
        "dynamic_prompt". Usable as a decorator."""
        self._check_open("dynamic_prompt")
        if not callable(fn):
            raise ValueError("yolop_sdk: dynamic_prompt needs a function")
        self._dynamic_prompt = fn
        return fn

    def command(self, name: str, description: str = "", handler: Optional[Callable[[str], Any]] = None):
        """Registers a slash command, shown as "<extension>:<name>";
        handler(arguments) gets the raw argument string and returns the
        message shown to the user (or a CommandExecuteResult dict); raising
        reports a failure. The server announces "commands". Without handler
        it is a decorator."""
        if handler is None:
            return lambda h: (self.command(name, description, h), h)[1]
        self._check_open("command(%s)" % _q(name))
        if not name or not callable(handler):
            raise ValueError("yolop_sdk: command needs a name and a handler")
        if name in self._commands:
            raise ValueError("yolop_sdk: command %s is registered twice" % _q(name))
        self._commands[name] = (description, handler)
        return handler

    def mcp_server(self, decl: Dict[str, Any]) -> None:
        """Declares an MCP server the extension provides (an MCPServerDecl);
        the server announces "mcp_servers"."""
        self._check_open("mcp_server")
        if not decl.get("name"):
            raise ValueError("yolop_sdk: mcp_server needs a name")
        self._mcp_servers.append(dict(decl))

    def on_config(self, fn: Callable[[Any], Any]):
        """Sets fn(config), called once with initialize's config (None when
        the host sent none) before the handshake is answered; raising fails
        initialize, so a server refuses a config it cannot use."""
        self._check_open("on_config")
        self._on_config = fn
        return fn

    def on_config_changed(self, fn: Callable[[Any], Any]):
        """Sets fn(config) -> bool, the handler of config/changed: True means
        the new config needs a restart ("restart-required"), False or None
        that it was applied ("ok"). The server announces "config"."""
        self._check_open("on_config_changed")
        self._on_config_changed = fn
        return fn

    def on_trace(self, fn: Callable[[TraceEventParams], Any]):
        """Sets fn(event), called for every trace/event in arrival order on
        one task, so a slow exporter never blocks the connection; when too
        many wait, new ones are dropped with a warning. The server announces
        "trace"."""
        self._check_open("on_trace")
        self._on_trace = fn
        return fn

    def on_workspace_changed(self, fn: Callable[[str], Any]):
        """Sets fn(root), called when the host repoints the workspace root
        (workspace/changed), in order with the trace events."""
        self._check_open("on_workspace_changed")
        self._on_workspace = fn
        return fn

    def on_initialized(self, fn: Callable[[], Any]):
        """Sets fn(), called once the host sends initialized (the handshake
        is done and the host listens: a good moment for a first status), in
        order with the trace events."""
        self._check_open("on_initialized")
        self._on_initialized = fn
        return fn

    # ---------------------------------------------------------------- handshake

    def capabilities(self) -> List[str]:
        """The capability tokens the server announces, in canonical order."""
        has = {_meta.CAP_CANCEL}
        if self._tools:
            has.add(_meta.CAP_TOOLS)
        if any(t.streaming for t in self._tools.values()):
            has.add(_meta.CAP_STREAMING)
        if self._hooks:
            has.add(_meta.CAP_HOOKS)
        if self._static_prompt is not None or self._dynamic_prompt is not None:
            has.add(_meta.CAP_PROMPT)
        if self._dynamic_prompt is not None:
            has.add(_meta.CAP_DYNAMIC_PROMPT)
        if self._commands:
            has.add(_meta.CAP_COMMANDS)
        if self._mcp_servers:
            has.add(_meta.CAP_MCP_SERVERS)
        if self._on_trace is not None:
            has.add(_meta.CAP_TRACE)
        if self._on_config_changed is not None:
            has.add(_meta.CAP_CONFIG)
        if self._opt_status:
            has.add(_meta.CAP_STATUS)
        if self._opt_ui_ask:
            has.add(_meta.CAP_UI_ASK)
        if self._opt_log:
            has.add(_meta.CAP_LOG)
        return [c for c in _meta.CAPABILITIES if c in has]

    def _capability_params(self) -> Dict[str, Any]:
        p: Dict[str, Any] = {}
        if self._commands:
            p["commands"] = [dict({"name": n}, **({"description": d} if d else {})) for n, (d, _) in self._commands.items()]
        if self._hooks:
            subs = []
            for h in self._hooks:
                s: Dict[str, Any] = {"event": h.event, "matcher": h.matcher}
                if h.timeout_ms:
                    s["timeout_ms"] = h.timeout_ms
                if h.on_error:
                    s["on_error"] = h.on_error
                subs.append(s)
            p["hooks"] = subs
        if self._mcp_servers:
            p["mcp_servers"] = self._mcp_servers
        if self._static_prompt is not None or self._dynamic_prompt is not None:
            decl: Dict[str, Any] = {}
            if self._static_prompt:
                decl["static"] = self._static_prompt
            if self._dynamic_prompt is not None:
                decl["dynamic"] = True
            p["prompt"] = decl
        if self._tools:
            p["tools"] = [{"name": n} for n in self._tools]
        return p

    @property
    def init(self) -> InitializeParams:
        """The initialize params the host sent; {} before the handshake."""
        return self._init or {}

    # ----------------------------------------------------- server-to-host calls

    def _gate(self, fn: str, method: str, declared: bool, flag: str, token: str) -> None:
        if not declared:
            raise NotDeclaredError("extension %s: %s: %s is not declared: pass %s=True to Server (and declare it in the manifest)" % (_q(self.name), fn, method, flag))
        if self._host_caps is None:
            raise NotInitializedError("extension %s: %s: the handshake has not completed; call it from a handler or after on_config" % (_q(self.name), fn))
        if token not in self._host_caps:
            raise NotAdvertisedError("extension %s: %s: %s is not advertised by the host (it has no surface for it in this mode); carry on without it" % (_q(self.name), fn, method))

    def status(self, text: str) -> bool:
        """Sets the extension's status text in the host's status bar; empty
        text clears it. Raises NotDeclaredError without Server(status=True)
        and NotInitializedError before the handshake; returns False (nothing
        sent) when the host did not advertise "status", True once sent."""
        try:
            self._gate("status", _meta.METHOD_STATUS_CHANGED, self._opt_status, "status", _meta.CAP_STATUS)
        except NotAdvertisedError:
            return False
        self._notify(_meta.METHOD_STATUS_CHANGED, {"text": str(text)})
        return True

    async def ask(self, prompt: str, *, options: Optional[List[str]] = None, secret: bool = False, placeholder: str = "") -> UIAskResult:
        """Asks the user a question through the host (the ui/ask request) and
        waits for the answer: {"answer": ...}, with "cancelled": True when the
        user dismissed it. Needs Server(ui_ask=True) and a host that
        advertised "ui_ask" (NotDeclaredError, NotAdvertisedError otherwise).
        Cancelling the awaiting task sends the host a cancel."""
        self._gate("ask", _meta.METHOD_UI_ASK, self._opt_ui_ask, "ui_ask", _meta.CAP_UI_ASK)
        params: Dict[str, Any] = {"prompt": str(prompt)}
        if options:
            params["options"] = [str(o) for o in options]
        if placeholder:
            params["placeholder"] = str(placeholder)
        if secret:
            params["secret"] = True
        msg = await self._call(_meta.METHOD_UI_ASK, params)
        if "error" in msg:
            err = msg["error"] if isinstance(msg["error"], dict) else {}
            raise YepError(int(err.get("code", _meta.CODE_INTERNAL_ERROR)), "extension %s: ui/ask: %s" % (_q(self.name), err.get("message", "")), err.get("data"))
        res = msg.get("result")
        return res if isinstance(res, dict) else {}

    def log(self, level: str, message: str, **fields: Any) -> None:
        """Records a structured log line: to the host as a log notification
        when Server(log=True) and the host advertised "log", otherwise to
        stderr. level is "trace", "debug", "info", "warn" or "error"."""
        if self._opt_log and self._host_caps is not None and _meta.CAP_LOG in self._host_caps and self._write is not None:
            p: Dict[str, Any] = {"message": str(message)}
            if level:
                p["level"] = level
            if fields:
                p["fields"] = {k: (str(v) if isinstance(v, BaseException) else v) for k, v in fields.items()}
            try:
                self._notify(_meta.METHOD_LOG, p)
                return
            except (TypeError, ValueError):
                pass
        extra = "".join(" %s=%s" % (k, json.dumps(v, default=str)) for k, v in fields.items())
        print("%s: [%s] %s%s" % (self.name, level.upper(), message, extra), file=sys.stderr, flush=True)

    # -------------------------------------------------------------------- wire

    def _send(self, msg: Dict[str, Any]) -> None:
        line = json.dumps(msg, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8") + b"\n"
        with self._write_lock:
            if self._write is not None:
                self._write(line)

    def _notify(self, method: str, params: Dict[str, Any]) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def _reply(self, rid: Any, result: Any) -> None:
        try:
            self._send({"jsonrpc": "2.0", "id": rid, "result": result})
        except (TypeError, ValueError) as e:
            self._reply_error(rid, YepError(_meta.CODE_INTERNAL_ERROR, "encoding result: %s" % e))

    def _reply_error(self, rid: Any, e: YepError) -> None:
        self._send({"jsonrpc": "2.0", "id": rid, "error": e.wire()})

    async def _call(self, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
        self._next_id += 1
        rid = self._next_id
        fut = asyncio.get_running_loop().create_future()
        self._pending[rid] = fut
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        try:
            return await fut
        except asyncio.CancelledError:
            self._pending.pop(rid, None)
            if self._host_caps is not None and _meta.CAP_CANCEL in self._host_caps and self._write is not None:
                self._next_id += 1
                cid = self._next_id
                self._pending[cid] = asyncio.get_running_loop().create_future()  # its answer is dropped
                self._send({"jsonrpc": "2.0", "id": cid, "method": _meta.METHOD_CANCEL, "params": {"id": rid}})
            raise

    # ------------------------------------------------------------------- serve

    def serve(self) -> None:
        """Serves the host over stdin and stdout until it sends exit or
        closes stdin. In-flight handlers are cancelled and waited for, and
        queued trace events delivered, before it returns."""
        asyncio.run(self.serve_async())

    async def serve_async(self, reader: Optional[asyncio.StreamReader] = None, write: Optional[Callable[[bytes], None]] = None) -> None:
        """serve() inside a running event loop, over reader (default: stdin)
        and write (default: stdout)."""
        if self._frozen:
            raise RuntimeError("yolop_sdk: this Server has already served a connection; create a new one")
        self._frozen = True
        self._loop = asyncio.get_running_loop()
        if reader is None:
            reader = _stdin_reader(self._loop)
        if write is None:
            out = sys.stdout.buffer

            def write(b: bytes) -> None:
                try:
                    out.write(b)
                    out.flush()
                except (BrokenPipeError, ValueError):
                    pass
        self._write = write
        self._events = asyncio.Queue()
        self._done = asyncio.Event()
        events = asyncio.ensure_future(self._run_events())
        try:
            while not self._done.is_set():
                try:
                    line = await reader.readline()
                except ValueError:
                    self.log("warn", "skipping a line longer than %d bytes" % _meta.DEFAULT_MAX_MESSAGE_BYTES)
                    continue
                if not line:
                    break  # end of input: the host is gone
                line = line.strip()
                if not line:
                    continue
                try:
                    msg = json.loads(line)
                except ValueError:
                    self.log("warn", "skipping a line that is not JSON")
                    continue
                await self._receive(msg)
        finally:
            tasks = list(self._inflight.values())
            for t in tasks:
                t.cancel()
            if tasks:
                await asyncio.gather(*tasks, return_exceptions=True)
            for f in self._pending.values():
                f.cancel()
            self._events.put_nowait(None)
            await events
            self._write = None

    async def _run_events(self) -> None:
        assert self._events is not None
        while True:
            item = await self._events.get()
            if item is None:
                return
            fn, arg = item
            try:
                await _settle(fn(arg))
            except Exception:
                self.log("error", "an event callback failed", error=traceback.format_exc())

    async def _receive(self, msg: Any) -> None:
        if not isinstance(msg, dict):
            self.log("warn", "skipping a message that is not a JSON object (YEP sends one object per line)")
            return
        if "method" not in msg:
            rid = msg.get("id")
            fut = self._pending.pop(rid, None) if isinstance(rid, int) and not isinstance(rid, bool) else None
            if fut is not None and not fut.done():
                fut.set_result(msg)
            return
        rid, method = msg.get("id"), msg.get("method")
        if rid is not None and not _is_id(rid):
            self.log("warn", "skipping a request whose id is not a string or an integer")
            return
        problem = None
        if msg.get("jsonrpc", "2.0") != "2.0":  # a missing member is tolerated, as the Go SDK does
            problem = '"jsonrpc" must be "2.0"'
        elif not isinstance(method, str):
            problem = '"method" must be a string'
        elif "result" in msg or "error" in msg:
            problem = 'a request cannot carry "result" or "error"'
        else:
            for k in msg:
                if k not in ENVELOPE and k.lower() in ENVELOPE:
                    problem = "member %s is a case variant of an envelope member" % _q(k)
        if problem is not None:
            if rid is not None:
                self._reply_error(rid, YepError(_meta.CODE_INVALID_REQUEST, "invalid request: " + problem))
            return
        params = msg.get("params")
        if rid is None:
            self._notification(method, params)
            return
        if params is None:
            params = {}
        if not isinstance(params, dict):
            self._reply_error(rid, YepError(_meta.CODE_INVALID_PARAMS, "extension %s: %s: invalid params: params must be an object" % (_q(self.name), method)))
            return
        if method == _meta.METHOD_CANCEL:
            target, found = params.get("id"), False
            if _is_id(target):
                key = json.dumps(target)
                task = self._inflight.get(key)
                if task is not None:
                    found = True
                    self._cancelled.add(key)
                    task.cancel()
            self._reply(rid, {"cancelled": found})
            return
        if method == _meta.METHOD_INITIALIZE:
            # Answered before the next line is read.
            try:
                self._reply(rid, await self._initialize(params))
            except YepError as e:
                self._reply_error(rid, e)
            return
        key = json.dumps(rid)
        if key in self._inflight:
            self._reply_error(rid, YepError(_meta.CODE_INVALID_REQUEST, "request id %s is already in flight" % key))
            return
        task = asyncio.ensure_future(self._run(rid, key, method, params))
        self._inflight[key] = task

    def _notification(self, method: str, params: Any) -> None:
        if method == _meta.METHOD_EXIT:
            assert self._done is not None
            self._done.set()
            return
        if not isinstance(params, dict) or self._init is None:
            return
        assert self._events is not None
        if method == _meta.METHOD_INITIALIZED and self._on_initialized is not None:
            fn = self._on_initialized
            self._events.put_nowait((lambda _: fn(), None))
        elif method == _meta.METHOD_TRACE_EVENT and self._on_trace is not None:
            if not isinstance(params.get("type"), str):
                self.log("warn", "skipping a malformed trace/event")
                return
            if self._events.qsize() >= MAX_QUEUED_EVENTS:
                self.log("warn", "dropping a trace/event: too many are waiting for on_trace")
                return
            self._events.put_nowait((self._on_trace, params))
        elif method == _meta.METHOD_WORKSPACE_CHANGED and self._on_workspace is not None:
            root = params.get("workspace_root")
            if not isinstance(root, str):
                self.log("warn", "skipping a malformed workspace/changed")
                return
            self._events.put_nowait((self._on_workspace, root))
        # initialized and notifications this version does not know: ignored.

    async def _run(self, rid: Any, key: str, method: str, params: Dict[str, Any]) -> None:
        result: Any = None
        err: Optional[YepError] = None
        try:
            result = await self._dispatch(rid, method, params)
        except asyncio.CancelledError:
            err = YepError(_meta.CODE_CANCELLED, "cancelled")
        except YepError as e:
            err = e
        except Exception as e:  # a bug in the SDK or a handler: an internal error, not a crash
            self.log("error", "%s failed" % method, error=traceback.format_exc())
            err = YepError(_meta.CODE_INTERNAL_ERROR, "extension %s: %s failed: %s" % (_q(self.name), method, e))
        finally:
            self._inflight.pop(key, None)
        if key in self._cancelled:
            self._cancelled.discard(key)
            err = YepError(_meta.CODE_CANCELLED, "cancelled")
        if err is not None:
            self._reply_error(rid, err)
        else:
            self._reply(rid, result)

    async def _dispatch(self, rid: Any, method: str, params: Dict[str, Any]) -> Any:
        if self._init is None:
            raise YepError(_meta.CODE_NOT_INITIALIZED, "extension %s: %s before initialize; send initialize first" % (_q(self.name), method))
        if self._shutdown and method != _meta.METHOD_SHUTDOWN:
            raise YepError(_meta.CODE_INVALID_REQUEST, "extension %s: %s after shutdown; only exit may follow" % (_q(self.name), method))
        if method == _meta.METHOD_TOOL_CALL:
            return await self._tool_call(rid, params)
        if method == _meta.METHOD_HOOK_FIRE:
            return await self._hook_fire(params)
        if method == _meta.METHOD_PROMPT_CONTRIBUTION:
            return await self._prompt_contribution(params)
        if method == _meta.METHOD_COMMAND_EXECUTE:
            return await self._command_execute(params)
        if method == _meta.METHOD_CONFIG_CHANGED:
            return await self._config_changed(params)
        if method == _meta.METHOD_SHUTDOWN:
            self._shutdown = True
            return {}
        raise YepError(_meta.CODE_METHOD_NOT_FOUND, "extension %s does not serve method %s" % (_q(self.name), _q(method)))

    # The methods this server answers, host to server; the drift guard checks
    # them against meta.json.
    HANDLED_METHODS = (
        _meta.METHOD_INITIALIZE,
        _meta.METHOD_INITIALIZED,
        _meta.METHOD_TOOL_CALL,
        _meta.METHOD_CANCEL,
        _meta.METHOD_PROMPT_CONTRIBUTION,
        _meta.METHOD_HOOK_FIRE,
        _meta.METHOD_TRACE_EVENT,
        _meta.METHOD_CONFIG_CHANGED,
        _meta.METHOD_WORKSPACE_CHANGED,
        _meta.METHOD_COMMAND_EXECUTE,
        _meta.METHOD_SHUTDOWN,
        _meta.METHOD_EXIT,
    )

    async def _initialize(self, params: Dict[str, Any]) -> InitializeResult:
        if self._init is not None:
            raise YepError(_meta.CODE_INVALID_REQUEST, "extension %s: initialize received twice; it opens the connection once" % _q(self.name))
        theirs = _opt_str(params, "protocol_version") or _meta.PROTOCOL_VERSION  # missing: the host speaks ours
        caps = params.get("capabilities")
        if caps is None:
            caps = []
        if not isinstance(caps, list):
            raise YepError(_meta.CODE_INVALID_PARAMS, "extension %s: initialize: invalid params: capabilities must be an array" % _q(self.name))
        ours = _parse_version(_meta.PROTOCOL_VERSION)
        data = {"protocol_version": _meta.PROTOCOL_VERSION, "min_protocol_version": _meta.MIN_PROTOCOL_VERSION}
        try:
            t = _parse_version(theirs)
        except ValueError as e:
            raise YepError(_meta.CODE_INVALID_REQUEST, "extension %s: %s" % (_q(self.name), e), data)
        if t[0] != ours[0]:
            raise YepError(_meta.CODE_INVALID_REQUEST, "extension %s: host protocol version %s is incompatible with the server's %s (majors must match); update the extension or yolop"
                           % (_q(self.name), theirs, _meta.PROTOCOL_VERSION), data)
        negotiated = t if t[1] < ours[1] else ours
        if self._on_config is not None:
            try:
                await _settle(self._on_config(params.get("config")))
            except YepError:
                raise
            except Exception as e:
                raise YepError(_meta.CODE_INVALID_PARAMS, "extension %s: config rejected: %s" % (_q(self.name), e))
        self._init = params  # type: ignore[assignment]
        self._host_caps = frozenset(c for c in caps if isinstance(c, str))
        res: Dict[str, Any] = {"protocol_version": "%d.%d" % negotiated, "name": self.name}
        if self.version:
            res["version"] = self.version
        res["capabilities"] = self.capabilities()
        cp = self._capability_params()
        if cp:
            res["capability_params"] = cp
        return res  # type: ignore[return-value]

    async def _tool_call(self, rid: Any, params: Dict[str, Any]) -> ToolResult:
        name = _opt_str(params, "name")
        t = self._tools.get(name)
        if t is None:
            raise YepError(_meta.CODE_INVALID_PARAMS, "extension %s has no tool %s (it serves: %s)" % (_q(self.name), _q(name), ", ".join(self._tools) or "none"))
        call = ToolCall(self, rid, params, t.streaming)
        try:
            out = await _settle(t.handler(call))
        except (asyncio.CancelledError, YepError):
            raise
        except Exception as e:
            if not isinstance(e, ToolError):
                self.log("debug", "tool %s failed" % _q(name), error=str(e))
            return {"output": str(e), "is_error": True}
        res = _tool_result(out)
        try:
            json.dumps(res, allow_nan=False)
        except (TypeError, ValueError) as e:
            return {"output": "tool result: invalid data: %s" % e, "is_error": True}
        return res

    async def _hook_fire(self, params: Dict[str, Any]) -> HookFireResult:
        event, tool = _opt_str(params, "event"), _opt_str(params, "toolName")
        matcher = _opt_str(params, "matcher")
        payload = _opt_obj(params, "payload")
        if payload.get("result") is not None and not isinstance(payload.get("result"), dict):
            raise YepError(_meta.CODE_INVALID_PARAMS, "extension %s: hook/fire: invalid params: payload: result must be an object" % _q(self.name))
        ev = HookEvent(event, tool, payload)
        out: Dict[str, Any] = {"decision": _meta.DECISION_ALLOW}
        for h in self._hooks:
            if h.event != event:
                continue
            if matcher and h.matcher != matcher:
                continue
            if not matcher and not h.matches(tool):
                continue
            ev.matcher = h.matcher
            what = "hook %s %s" % (h.event, _q(h.matcher))
            try:
                res = await _settle(h.handler(ev))
            except (asyncio.CancelledError, YepError):
                raise
            except Exception as e:
                raise YepError(_meta.CODE_UNCLASSIFIED, "extension %s: %s failed on tool %s: %s" % (_q(self.name), what, _q(tool), e))
            if res is None:
                continue
            if not isinstance(res, dict):
                raise YepError(_meta.CODE_INTERNAL_ERROR, "extension %s: %s answered %r; return allow(), block(reason), mutate(...) or None" % (_q(self.name), what, res))
            decision = res.get("decision") or _meta.DECISION_ALLOW
            if decision == _meta.DECISION_ALLOW:
                continue
            if decision == _meta.DECISION_BLOCK:
                return {k: v for k, v in res.items() if k in ("decision", "reason", "args", "result") and v not in (None, "")}  # type: ignore[return-value]
            if decision == _meta.DECISION_MUTATE:
                out["decision"] = _meta.DECISION_MUTATE
                if res.get("reason"):
                    out["reason"] = res["reason"]
                else:
                    out.pop("reason", None)
                if res.get("args") is not None:
                    ev.args = out["args"] = res["args"]
                if res.get("result") is not None:
                    ev.result = out["result"] = res["result"]
                continue
            raise YepError(_meta.CODE_INTERNAL_ERROR, "extension %s: %s answered decision %s; want allow, block or mutate" % (_q(self.name), what, _q(decision)))
        return out  # type: ignore[return-value]

    async def _prompt_contribution(self, params: Dict[str, Any]) -> Dict[str, Any]:
        if self._dynamic_prompt is None:
            raise YepError(_meta.CODE_METHOD_NOT_FOUND, "extension %s did not declare a dynamic prompt" % _q(self.name))
        try:
            text = await _settle(self._dynamic_prompt(params))  # type: ignore[arg-type]
        except (asyncio.CancelledError, YepError):
            raise
        except Exception as e:
            raise YepError(_meta.CODE_UNCLASSIFIED, "extension %s: dynamic_prompt: %s" % (_q(self.name), e))
        return {"text": "" if text is None else str(text)}

    async def _command_execute(self, params: Dict[str, Any]) -> CommandExecuteResult:
        full = _opt_str(params, "name")
        name = full[len(self.name) + 1:] if full.startswith(self.name + ":") else full
        entry = self._commands.get(name)
        if entry is None:
            raise YepError(_meta.CODE_INVALID_PARAMS, "extension %s has no command %s (it serves: %s)" % (_q(self.name), _q(full), ", ".join(self._commands) or "none"))
        arguments = _opt_str(params, "arguments")
        try:
            out = await _settle(entry[1](arguments))
        except (asyncio.CancelledError, YepError):
            raise
        except Exception as e:
            return {"success": False, "message": str(e)}
        if isinstance(out, dict):
            res: Dict[str, Any] = {"success": bool(out.get("success"))}
            if out.get("message"):
                res["message"] = str(out["message"])
            return res  # type: ignore[return-value]
        res = {"success": True}
        if out is not None and str(out):
            res["message"] = str(out)
        return res  # type: ignore[return-value]

    async def _config_changed(self, params: Dict[str, Any]) -> Dict[str, Any]:
        if self._on_config_changed is None:
            raise YepError(_meta.CODE_METHOD_NOT_FOUND, "extension %s did not declare config (no on_config_changed handler); restart it to apply a new config" % _q(self.name))
        try:
            restart = await _settle(self._on_config_changed(params.get("config")))
        except (asyncio.CancelledError, YepError):
            raise
        except Exception as e:
            raise YepError(_meta.CODE_UNCLASSIFIED, "extension %s: on_config_changed: %s" % (_q(self.name), e))
        return {"status": _meta.STATUS_RESTART_REQUIRED if restart else _meta.STATUS_OK}


def _tool_result(out: Any) -> ToolResult:
    if isinstance(out, dict):
        res: Dict[str, Any] = {"output": "" if out.get("output") is None else str(out.get("output"))}
        if out.get("is_error"):
            res["is_error"] = True
        if out.get("data") is not None:
            res["data"] = out["data"]
        return res  # type: ignore[return-value]
    return {"output": "" if out is None else str(out)}


def _stdin_reader(loop: asyncio.AbstractEventLoop) -> asyncio.StreamReader:
    """A StreamReader fed from file descriptor 0 by a daemon thread. Raw
    os.read, not sys.stdin, so a thread still blocked at exit holds no
    interpreter lock; the event loop never blocks on the host."""
    reader = asyncio.StreamReader(limit=_meta.DEFAULT_MAX_MESSAGE_BYTES + 1, loop=loop)

    def pump() -> None:
        while True:
            try:
                chunk = os.read(0, 1 << 16)
            except OSError:
                chunk = b""
            try:
                if not chunk:
                    loop.call_soon_threadsafe(reader.feed_eof)
                    return
                loop.call_soon_threadsafe(reader.feed_data, chunk)
            except RuntimeError:
                return  # the loop has closed

    threading.Thread(target=pump, name="yolop-sdk-stdin", daemon=True).start()
    return reader


def serve(server: Server) -> None:
    """Serves server over stdin and stdout: server.serve()."""
    server.serve()
