"""The echo example passes `yolop ext doctor` with every facet."""
import os
import unittest

import support

EXAMPLE = os.path.join(support.SDK, "examples", "echo")


class ExampleTest(unittest.TestCase):
    def test_doctor(self):
        r = support.run_yolop("ext", "doctor", EXAMPLE)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn(", 0 failed", r.stdout)
        for facet in ("prompt", "tool count", "command greet", "config/changed", "ui/ask", "status/changed", "cancel honoured", "hook pre_tool_use", "conform to schema"):
            self.assertIn(facet, r.stdout)


if __name__ == "__main__":
    unittest.main()
