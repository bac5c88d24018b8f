#!/usr/bin/env python3
"""Stop hook: ask once for the tests to be run before the turn ends."""
import json
import sys

input_data = json.load(sys.stdin)
if input_data.get("stop_hook_active"):
    sys.exit(0)
print(json.dumps({"decision": "block", "reason": "Run the tests before you finish."}))
