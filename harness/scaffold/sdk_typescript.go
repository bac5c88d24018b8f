package scaffold

import tssdk "yolop.dev/sdk/typescript"

// The TypeScript SDK: its server template, and the package.json and
// runtime files under src/ that sdk/typescript embeds, vendored under
// SDKDir.
func init() {
	vendoredSDKs[TypeScript] = vendoredSDK{template: "typescript_sdk/server.js.tmpl", fsys: tssdk.Files}
}
