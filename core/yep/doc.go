// Package yep holds the wire types of YEP, the yolop extension protocol:
// JSON-RPC 2.0 over newline-delimited JSON on stdio, spoken between the yolop
// host and a capability server.
//
// This package is the single source of truth for the wire. The JSON Schema
// published under schema/yep/v1/ is generated from these types, and a test
// fails when the committed schema drifts from them.
//
// Forward compatibility is a hard rule on both sides: every type here ignores
// unknown fields when decoding and defaults missing ones to their zero value,
// and open vocabularies (capability tokens, capability_params) are carried
// verbatim even when this package does not know them.
package yep
