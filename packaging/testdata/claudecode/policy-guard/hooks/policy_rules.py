"""The rules pretooluse.py applies to Bash commands."""


def decide(tool, tool_input):
    if tool != "Bash":
        return None
    command = tool_input.get("command", "")
    if "rm -rf" in command:
        return {"permissionDecision": "deny", "permissionDecisionReason": "rm -rf is not allowed in this project"}
    if "deploy" in command:
        return {"permissionDecision": "ask", "permissionDecisionReason": "deploying needs a human"}
    if "npm " in command:
        return {"permissionDecision": "allow", "permissionDecisionReason": "npm is pnpm here",
                "updatedInput": dict(tool_input, command=command.replace("npm ", "pnpm ", 1))}
    if command == "make it a number":
        return {"permissionDecision": "allow", "updatedInput": {"command": 42}}
    if command.startswith("echo trusted"):
        return {"permissionDecision": "allow", "permissionDecisionReason": "echo is harmless"}
    return None
