# SPDX-License-Identifier: GPL-2.0
"""analysis/TIDY.md documents exactly the columns the code writes (a
plotting engineer codes against it)."""

import os
import re
import unittest

from analysis import medians, metrics, observer, tidy, verdicts

TIDY_MD = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "analysis", "TIDY.md")


class TidyDoc(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(TIDY_MD) as f:
            cls.text = f.read()

    def test_every_file_and_column_line(self):
        documented = set(re.findall(r"^`([a-z_0-9,]+)`$", self.text, re.M))
        files = dict(tidy.COLUMNS, medians=medians.MEDIANS_COLUMNS,
                     comparisons=verdicts.COMPARISONS_COLUMNS,
                     observer=observer.OBSERVER_COLUMNS)
        for name, cols in files.items():
            with self.subTest(name):
                self.assertIn(f"`{name}.csv`", self.text)
                self.assertIn(",".join(cols), documented)

    def test_every_metric(self):
        for m in metrics.METRICS:
            self.assertIn(f"`{m}", self.text, m)


if __name__ == "__main__":
    unittest.main()
