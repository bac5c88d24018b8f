//! A YEP capability server in Rust against the raw protocol, standard
//! library only, built by the wasm transport's tests for wasm32-wasip1:
//! the transport runs any wasip1 command, not only Go ones.
//!
//! Newline-delimited JSON-RPC 2.0 on stdin and stdout. It serves the
//! initialize handshake, the tools "echo" (returns its "text" argument)
//! and "panic" (panics, which aborts the guest with a trap), shutdown and
//! exit. The JSON handling is the least that works for these messages.

use std::io::{self, BufRead, Write};

/// The raw JSON value of `key` in `msg`: a string with its quotes and
/// escapes, or a scalar up to the next delimiter.
fn raw_value<'a>(msg: &'a str, key: &str) -> Option<&'a str> {
    let pat = format!("\"{}\":", key);
    let start = msg.find(&pat)? + pat.len();
    let rest = msg[start..].trim_start();
    let skipped = msg.len() - start - rest.len();
    let begin = start + skipped;
    if rest.starts_with('"') {
        let bytes = rest.as_bytes();
        let mut i = 1;
        while i < bytes.len() {
            match bytes[i] {
                b'\\' => i += 2,
                b'"' => return Some(&msg[begin..begin + i + 1]),
                _ => i += 1,
            }
        }
        None
    } else {
        let end = rest.find(|c| c == ',' || c == '}' || c == ']').unwrap_or(rest.len());
        Some(rest[..end].trim())
    }
}

fn reply(out: &mut impl Write, id: &str, result: &str) {
    let _ = writeln!(out, "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{}}}", id, result);
    let _ = out.flush();
}

fn fail(out: &mut impl Write, id: &str, code: i32, message: &str) {
    let _ = writeln!(
        out,
        "{{\"jsonrpc\":\"2.0\",\"id\":{},\"error\":{{\"code\":{},\"message\":\"{}\"}}}}",
        id, code, message
    );
    let _ = out.flush();
}

fn main() {
    let stdin = io::stdin();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    for line in stdin.lock().lines() {
        let line = match line {
            Ok(l) => l,
            Err(_) => break,
        };
        let method = match raw_value(&line, "method") {
            Some(m) => m.trim_matches('"').to_string(),
            None => continue, // a response: this server sends no requests
        };
        let id = match raw_value(&line, "id") {
            Some(id) => id.to_string(),
            None => {
                if method == "exit" {
                    std::process::exit(0);
                }
                continue; // initialized, cancel notifications, ...
            }
        };
        match method.as_str() {
            "initialize" => reply(
                &mut out,
                &id,
                "{\"protocol_version\":\"1.0\",\"name\":\"rustecho\",\"version\":\"0.1.0\",\
                 \"capabilities\":[\"tools\"],\
                 \"capability_params\":{\"tools\":[{\"name\":\"echo\"},{\"name\":\"panic\"}]}}",
            ),
            "tool/call" => match raw_value(&line, "name").map(|n| n.trim_matches('"')) {
                Some("echo") => {
                    let text = raw_value(&line, "text").unwrap_or("\"\"");
                    reply(&mut out, &id, &format!("{{\"output\":{}}}", text));
                }
                Some("panic") => {
                    eprintln!("rustecho: panicking on request");
                    panic!("asked to panic");
                }
                _ => fail(&mut out, &id, -32602, "rustecho has no such tool"),
            },
            "shutdown" => reply(&mut out, &id, "null"),
            _ => fail(&mut out, &id, -32601, "rustecho does not serve this method"),
        }
    }
}
