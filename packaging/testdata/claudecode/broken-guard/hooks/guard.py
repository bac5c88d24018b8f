#!/usr/bin/env python3
import json
import sys

input_data = json.load(sys.stdin)
# A bug: the key is tool_input, not input. Claude Code would log the
# traceback (exit 1) and run the command anyway.
command = input_data["input"]["command"]
