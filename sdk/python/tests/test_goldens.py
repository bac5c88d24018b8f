"""The dialogue goldens (schema/yep/v1/dialogues) replay byte for byte,
modulo their volatile members, against the SDK's golden servers, through
the real `yolop ext replay`."""
import json
import os
import shutil
import stat
import sys
import tempfile
import unittest

import support

DIALOGUES = os.path.join(support.SCHEMA_DIR, "dialogues")

# What each scenario's manifest grants (harness/record/golden_test.go).
FACETS = {
    "lifecycle": {},
    "tool_call": {"tools": [{"name": "count", "streaming": True}, {"name": "wait", "streaming": True}]},
    "hook": {"tools": [{"name": "rm"}], "hooks": [{"event": "pre_tool_use", "matcher": "rm", "timeout_ms": 60000, "on_error": "block"}]},
    "ui_ask": {"ui_ask": True, "tools": [{"name": "greet"}]},
    "config_changed": {"config_schema": {"type": "object", "properties": {"level": {"type": "string"}}}},
    "trace_event": {"trace": True},
}


def package(scenario, transcript_path):
    """A package directory whose server is the golden server of scenario."""
    d = tempfile.mkdtemp(prefix="yolop-pysdk-golden-")
    os.mkdir(os.path.join(d, "bin"))
    server = os.path.join(d, "bin", "golden-server")
    with open(server, "w") as f:
        f.write("#!/bin/sh\nPYTHONDONTWRITEBYTECODE=1 GOLDEN_TRANSCRIPT=%s exec %s %s %s\n" % (
            transcript_path, sys.executable, os.path.join(support.FIXTURES, "golden_server.py"), scenario))
    os.chmod(server, os.stat(server).st_mode | stat.S_IXUSR)
    # The wrapper runs this interpreter on a fixture of the repository,
    # which imports the SDK from it and writes the transcript: the sandbox
    # says so.
    prefix = os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))
    facet = {"protocol_version": "1.0", "capabilityServer": {"command": "golden-server"},
             "sandbox": {"exec": True, "fs": [{"path": prefix}, {"path": support.REPO},
                                              {"path": os.path.dirname(transcript_path), "access": "rw"}]}}
    facet.update(FACETS[scenario])
    with open(os.path.join(d, "plugin.json"), "w") as f:
        json.dump({"name": "golden", "version": "1.0.0", "yolop": facet}, f)
    return d


class GoldenTest(unittest.TestCase):
    def test_every_golden_has_a_scenario(self):
        names = sorted(f[:-len(".txtar")] for f in os.listdir(DIALOGUES) if f.endswith(".txtar"))
        self.assertEqual(names, sorted(FACETS))

    def test_replay(self):
        for scenario in sorted(FACETS):
            with self.subTest(scenario=scenario):
                tmp = tempfile.mkdtemp(prefix="yolop-pysdk-transcript-")
                self.addCleanup(shutil.rmtree, tmp, True)
                transcript = os.path.join(tmp, "wire.txt")
                d = package(scenario, transcript)
                self.addCleanup(shutil.rmtree, d, True)
                r = support.run_yolop("ext", "replay", os.path.join(DIALOGUES, scenario + ".txtar"), d)
                self.assertEqual(r.returncode, 0, "replay %s:\n%s%s" % (scenario, r.stdout, r.stderr))
                with open(transcript, encoding="utf-8") as f:
                    lines = f.read().splitlines()
                self.assertTrue(any(l.startswith("← ") for l in lines), lines)
                support.validate_wire(self, lines)


if __name__ == "__main__":
    unittest.main()
