#!/usr/bin/env python3
"""PreToolUse entry point: reads the event, asks the rules, prints the
decision as Claude Code's hookSpecificOutput."""
import json
import sys

from policy_rules import decide

event = json.load(sys.stdin)
decision = decide(event.get("tool_name", ""), event.get("tool_input", {}))
if decision is not None:
    out = {"hookSpecificOutput": {"hookEventName": "PreToolUse"}}
    out["hookSpecificOutput"].update(decision)
    print(json.dumps(out))
sys.exit(0)
