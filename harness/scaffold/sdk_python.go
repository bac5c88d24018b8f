package scaffold

import pysdk "yolop.dev/sdk/python"

// The Python SDK: its server template, and the yolop_sdk package and
// pyproject.toml that sdk/python embeds, vendored under SDKDir.
func init() {
	vendoredSDKs[Python] = vendoredSDK{template: "python_sdk/server.py.tmpl", fsys: pysdk.Files}
}
