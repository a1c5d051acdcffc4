# SPDX-License-Identifier: GPL-2.0
"""The guest side of a boot and its runner on the host: QEMU, the job,
the console's judge and the results that come back (see JOB.md).  Run as
`python3 -m guest.run_guest` and `python3 -m guest.recheck` with the
repository root on PYTHONPATH (./run.sh boot, ./run.sh recheck)."""
