#!/usr/bin/env bash

# Output the guard's rules as additionalContext (the shape of
# claude-code's explanatory-output-style session-start.sh)

cat << 'JSON'
{
  "hookSpecificOutput": {
    "hookEventName": "SessionStart",
    "additionalContext": "Shell commands are validated by bash-guard: prefer rg to grep and find."
  }
}
JSON

exit 0
