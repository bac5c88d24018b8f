"""Shared test helpers: the repository layout, the yolop binary, a host
driver that records every line, and the wire-validation transcript."""
import atexit
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading

TESTS = os.path.dirname(os.path.abspath(__file__))
SDK = os.path.dirname(TESTS)
REPO = os.path.dirname(os.path.dirname(SDK))
SCHEMA_DIR = os.path.join(REPO, "schema", "yep", "v1")
FIXTURES = os.path.join(TESTS, "fixtures")

_bin = {}
_lock = threading.Lock()


def env():
    """The environment of every subprocess: no bytecode in the checkout."""
    e = dict(os.environ)
    e["PYTHONDONTWRITEBYTECODE"] = "1"
    return e


def yolop():
    """The yolop binary: $YOLOP_BIN, else built once from the repository."""
    with _lock:
        if "path" not in _bin:
            given = os.environ.get("YOLOP_BIN")
            if given:
                _bin["path"] = given
            else:
                d = tempfile.mkdtemp(prefix="yolop-pysdk-")
                atexit.register(shutil.rmtree, d, True)
                out = os.path.join(d, "yolop")
                subprocess.run(["go", "build", "-o", out, "./cmd/yolop"], cwd=REPO, check=True, env=env())
                _bin["path"] = out
        return _bin["path"]


def run_yolop(*args, timeout=120):
    return subprocess.run([yolop(), *args], capture_output=True, text=True, timeout=timeout, env=env())


def load_meta():
    with open(os.path.join(SCHEMA_DIR, "meta.json"), encoding="utf-8") as f:
        return json.load(f)


class Host:
    """A minimal host: starts a server process, sends lines, reads lines,
    and keeps the transcript of both directions."""

    def __init__(self, argv, transcript):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env())
        self.transcript = transcript
        self.lines = queue.Queue()
        self._next = 0
        self.stderr = []
        self._threads = [threading.Thread(target=self._read, daemon=True), threading.Thread(target=self._drain, daemon=True)]
        for t in self._threads:
            t.start()

    def _read(self):
        for raw in self.proc.stdout:
            self.transcript.append("← " + raw.decode("utf-8").rstrip("\n"))
            self.lines.put(json.loads(raw))
        self.lines.put(None)

    def _drain(self):
        for raw in self.proc.stderr:
            self.stderr.append(raw.decode("utf-8", "replace"))

    def send(self, msg, record=True):
        """Sends msg; record=False keeps a deliberately malformed line out of
        the transcript (validate-wire grades what the server emits)."""
        line = json.dumps(msg, separators=(",", ":"))
        if record:
            self.transcript.append("→ " + line)
        self.proc.stdin.write(line.encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def request(self, method, params=None, rid=None, record=True):
        if rid is None:
            self._next += 1
            rid = self._next
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg, record)
        return rid

    def notify(self, method, params=None, record=True):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg, record)

    def recv(self, timeout=30):
        msg = self.lines.get(timeout=timeout)
        if msg is None:
            raise EOFError("the server closed stdout; stderr:\n" + "".join(self.stderr))
        return msg

    def until(self, pred, timeout=30):
        """Reads messages until pred(msg); returns (msg, the ones before)."""
        seen = []
        while True:
            m = self.recv(timeout)
            if pred(m):
                return m, seen
            seen.append(m)

    def response(self, rid, timeout=30):
        return self.until(lambda m: "method" not in m and m.get("id") == rid, timeout)

    def handshake(self, caps, **params):
        p = {"protocol_version": "1.0", "session_id": "s", "workspace_root": "/w", "capabilities": caps}
        p.update(params)
        rid = self.request("initialize", p)
        res, _ = self.response(rid)
        self.notify("initialized", {})
        return res

    def close(self, timeout=30):
        rid = self.request("shutdown", {})
        self.response(rid)
        self.notify("exit", {})
        self.proc.stdin.close()
        rc = self.proc.wait(timeout)
        self._reap()
        return rc

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._reap()

    def _reap(self):
        for t in self._threads:
            t.join(10)
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if not f.closed:
                f.close()


def validate_wire(testcase, transcript):
    """Runs `yolop ext validate-wire` on the transcript: every message must
    conform to schema.json."""
    d = tempfile.mkdtemp(prefix="yolop-pysdk-wire-")
    try:
        path = os.path.join(d, "transcript.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(transcript) + "\n")
        r = run_yolop("ext", "validate-wire", path)
        testcase.assertEqual(r.returncode, 0, "validate-wire:\n%s%s\ntranscript:\n%s" % (r.stdout, r.stderr, "\n".join(transcript)))
    finally:
        shutil.rmtree(d, True)
