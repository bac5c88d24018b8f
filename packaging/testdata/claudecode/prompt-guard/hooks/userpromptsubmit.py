#!/usr/bin/env python3
"""UserPromptSubmit hook: block a prompt carrying a credential, else add
the project's rules as context."""
import json
import sys

input_data = json.load(sys.stdin)
prompt = input_data.get("prompt", "")
if "password" in prompt.lower():
    print(json.dumps({"decision": "block", "reason": "Prompts must not contain credentials."}))
    sys.exit(0)
print(json.dumps({
    "hookSpecificOutput": {
        "hookEventName": "UserPromptSubmit",
        "additionalContext": "Project rule: run the tests before committing.",
    }
}))
