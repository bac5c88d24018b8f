import json
import sys

event = json.load(sys.stdin)
if "git push" in event.get("tool_input", {}).get("command", ""):
    print("git push is blocked by push-guard", file=sys.stderr)
    sys.exit(2)
sys.exit(0)
