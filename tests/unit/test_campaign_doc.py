# SPDX-License-Identifier: GPL-2.0
"""docs/campaigns.md is what scripts/campaign/file.py's schema generates
(an edit to the schema without regenerating it fails here), the schema
covers every key the guest's job takes, and an unknown key is refused
naming every allowed key and the reference."""

import os
import subprocess
import tempfile
import unittest

from guest import job as jobmod
from scripts.campaign import file as campaign_file

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(ROOT, "docs", "campaigns.md")
REGEN = "/usr/bin/python3 -m scripts.campaign.file --reference > docs/campaigns.md"

GOOD = """name = "x"
variants = ["before", "after"]
cpus = [2]
repetitions = 2
"""


class Reference(unittest.TestCase):
    def test_doc_is_generated(self):
        with open(DOC) as f:
            text = f.read()
        self.assertEqual(text, campaign_file.reference(),
                         f"docs/campaigns.md is stale: regenerate it with {REGEN}")

    def test_command_prints_it(self):
        cp = subprocess.run(["/usr/bin/python3", "-m", "scripts.campaign.file", "--reference"],
                            cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT),
                            capture_output=True, text=True)
        self.assertEqual(cp.returncode, 0, cp.stderr)
        self.assertEqual(cp.stdout, campaign_file.reference())

    def test_every_key_documented(self):
        text = campaign_file.reference()
        for key in campaign_file.TOP:
            self.assertIn(f"| `{key}` |", text)
        for key in campaign_file.PERF:
            self.assertIn(f"| `perf.{key}` |", text)
        for key in campaign_file.POINT:
            self.assertIn(f"| `{key}` |", text)

    def test_required_said(self):
        text = campaign_file.reference()
        self.assertIn("| `mailboxes` | module | integer | **required** |", text)
        self.assertIn("`read_pct`, `mailboxes` in a module point", text)
        for key, k in campaign_file.TOP.items():
            if k.default is campaign_file.REQUIRED:
                self.assertRegex(text, rf"\| `{key}` \| [^|]+ \| \*\*required\*\* \|")

    def test_schema_covers_the_job(self):
        """A key guest/job.py takes that the campaign schema lacks would be
        neither accepted nor documented."""
        self.assertLessEqual(set(jobmod.POINT_KEYS), set(campaign_file.POINT))
        lockload = set(campaign_file.point_keys("execve")) - {"id", "primary_metric"}
        self.assertEqual(lockload, set(jobmod.WORKLOAD_KEYS))


class UnknownKey(unittest.TestCase):
    def refused(self, text):
        with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
            f.write(text)
        self.addCleanup(os.unlink, f.name)
        with self.assertRaises(campaign_file.CampaignError) as cm:
            campaign_file.load(f.name)
        msg = str(cm.exception)
        self.assertNotIn("\n", msg)
        return msg

    def test_top_level_lists_every_key(self):
        msg = self.refused(GOOD + 'colour = "blue"\n[[points]]\nid = "p"\nread_pct = 5\n'
                           'mailboxes = 4\n')
        self.assertIn("unknown key 'colour' (allowed: " + ", ".join(campaign_file.TOP), msg)
        self.assertIn("docs/campaigns.md", msg)

    def test_point_lists_every_key(self):
        msg = self.refused(GOOD + '[[points]]\nid = "p"\nread_pct = 5\nmailboxes = 4\n'
                           'colour = 1\n')
        self.assertIn("unknown key 'colour' (allowed: " + ", ".join(campaign_file.POINT), msg)
        for key in ("workload", "primary_metric", "writer_hz", "think_ns"):
            self.assertIn(key, msg)
        self.assertIn("docs/campaigns.md", msg)

    def test_mailboxes_required(self):
        msg = self.refused(GOOD + '[[points]]\nid = "p"\nread_pct = 5\n')
        self.assertIn("points[1].mailboxes: missing; must be an integer 1..4096", msg)

    def test_writer_hz_needs_a_workload(self):
        msg = self.refused(GOOD + '[[points]]\nid = "p"\nread_pct = 5\nmailboxes = 4\n'
                           'writer_hz = 10\n')
        self.assertIn("'writer_hz' is a lockload parameter", msg)


if __name__ == "__main__":
    unittest.main()
