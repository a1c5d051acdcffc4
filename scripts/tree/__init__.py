# SPDX-License-Identifier: GPL-2.0
"""A kernel developer's own git tree (kernel_tree.py: variants of its
commits, `./run.sh build --tree`) and bisection over it (bisect.py,
`./run.sh bisect`)."""
