"""yolop_sdk: write yolop capability servers in Python (standard library only).

A capability server speaks YEP (JSON-RPC 2.0, one JSON object per line) to
the yolop host over stdin and stdout. Register handlers on a Server, then
serve()::

    from yolop_sdk import Server

    server = Server("echo", "0.1.0")

    @server.tool("echo")
    async def echo(call):
        return call.args.get("text", "")

    server.serve()

Handlers may be plain functions or coroutines; each request runs as its own
asyncio task, and the host's cancel cancels it. The wire types are the
TypedDicts of yolop_sdk.types (generated from schema/yep/v1/schema.json) and
the protocol vocabulary is yolop_sdk.meta (generated from meta.json).
"""
from . import _meta as meta
from . import _wire as types
from ._meta import PROTOCOL_VERSION
from .server import (
    HookEvent,
    NotAdvertisedError,
    NotDeclaredError,
    NotInitializedError,
    SDKError,
    Server,
    ToolCall,
    ToolError,
    YepError,
    allow,
    block,
    mutate,
    serve,
)

__version__ = "0.1.0"

HANDLED_METHODS = Server.HANDLED_METHODS
"""The host-to-server methods the SDK answers (the drift guard checks them
against meta.json)."""

__all__ = [
    "HANDLED_METHODS",
    "PROTOCOL_VERSION",
    "HookEvent",
    "NotAdvertisedError",
    "NotDeclaredError",
    "NotInitializedError",
    "SDKError",
    "Server",
    "ToolCall",
    "ToolError",
    "YepError",
    "allow",
    "block",
    "meta",
    "mutate",
    "serve",
    "types",
]
