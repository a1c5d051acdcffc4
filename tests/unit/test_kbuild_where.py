# SPDX-License-Identifier: GPL-2.0
"""scripts/kbuild_where.py on a small tree made here: whether a kernel
builds a file (the Makefiles from its folder up, a composite object, an
ifdef, another architecture's file) and what would make it (the Kconfig
"depends on", the fragments that set the option)."""
import os
import shutil
import tempfile
import unittest

from scripts import kbuild_where as kw

FILES = {
    "Kbuild": "obj-y += kernel/\nobj-$(CONFIG_NET) += net/\n",
    "Makefile": "core-y := lib/\nifdef CONFIG_SOMETHING\nfoo := 1\nendif\n",
    "kernel/Makefile": "obj-y = fork.o exit.o \\\n\tsys.o\nobj-$(CONFIG_MAGIC) += magic.o\n",
    "kernel/fork.c": "", "kernel/exit.c": "", "kernel/sys.c": "", "kernel/magic.c": "",
    "kernel/orphan.c": "",
    "net/Makefile": "obj-y += core/\nifdef CONFIG_INET\nobj-y += ipv4/\nendif\n",
    "net/core/Makefile": "obj-y := dev.o\nobj-$(CONFIG_SYSFS) += net-sysfs.o\n",
    "net/core/dev.c": "", "net/core/net-sysfs.c": "",
    "net/ipv4/Makefile": "obj-y += route.o\n", "net/ipv4/route.c": "",
    "fs/Makefile": "obj-$(CONFIG_CACHE) += cache/\n",
    "fs/cache/Makefile": "cache-y := main.o cookie.o\nobj-$(CONFIG_CACHE) := cache.o\n",
    "fs/cache/cookie.c": "",
    "arch/ia64/kernel/mca.c": "",
    "net/Kconfig": "menuconfig NET\n\tbool \"Networking\"\n\tdepends on MMU && !UML\n\thelp\n\t  x\n",
    "lib/Makefile": "obj-y += x.o\n",
}


class Where(unittest.TestCase):
    def setUp(self):
        self.tree = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tree)
        os.makedirs(os.path.join(self.tree, "fs"))
        for rel, text in FILES.items():
            p = os.path.join(self.tree, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(text)

    def judge(self, rel, *opts, arch="arm"):
        config = {o: "y" for o in opts}
        config.update({o[:-2]: "m" for o in opts if o.endswith("=m")})
        return kw.judge(kw.where(self.tree, rel, arch), config)

    def test_builtin(self):
        self.assertEqual(self.judge("kernel/fork.c")[0], "builtin")
        # a continued line names it too
        self.assertEqual(self.judge("kernel/sys.c")[0], "builtin")

    def test_option_of_the_file(self):
        state, opts, line = self.judge("kernel/magic.c")
        self.assertEqual((state, opts), ("no", ["CONFIG_MAGIC"]))
        self.assertEqual(line, "kernel/Makefile:3: obj-$(CONFIG_MAGIC) += magic.o")
        self.assertEqual(self.judge("kernel/magic.c", "CONFIG_MAGIC")[0], "builtin")

    def test_option_of_a_folder(self):
        state, opts, line = self.judge("net/core/dev.c")
        self.assertEqual((state, opts), ("no", ["CONFIG_NET"]))
        self.assertEqual(line, "Kbuild:2: obj-$(CONFIG_NET) += net/")
        self.assertEqual(self.judge("net/core/net-sysfs.c", "CONFIG_NET")[1], ["CONFIG_SYSFS"])
        self.assertEqual(self.judge("net/core/net-sysfs.c", "CONFIG_NET", "CONFIG_SYSFS")[0],
                         "builtin")

    def test_ifdef_around_a_folder(self):
        self.assertEqual(self.judge("net/ipv4/route.c", "CONFIG_NET")[:2], ("no", ["CONFIG_INET"]))
        self.assertEqual(self.judge("net/ipv4/route.c", "CONFIG_NET", "CONFIG_INET")[0], "builtin")

    def test_composite_object(self):
        self.assertEqual(self.judge("fs/cache/cookie.c")[:2], ("no", ["CONFIG_CACHE"]))

    def test_module(self):
        config = {"CONFIG_MAGIC": "m"}
        self.assertEqual(kw.judge(kw.where(self.tree, "kernel/magic.c", "arm"), config)[:2],
                         ("module", ["CONFIG_MAGIC"]))

    def test_other_arch_and_unnamed(self):
        self.assertEqual(self.judge("arch/ia64/kernel/mca.c"), ("no", [], "arch/ia64"))
        state, _opts, why = self.judge("kernel/orphan.c")
        self.assertEqual((state, why), ("unknown", "kernel/Makefile names no orphan.o"))

    def test_depends(self):
        self.assertEqual(kw.kconfig_depends(self.tree, "CONFIG_NET"), ["MMU && !UML"])
        self.assertEqual(kw.kconfig_depends(self.tree, "CONFIG_NOPE"), [])

    def test_shipped_fragments(self):
        self.assertEqual(kw.fragments_setting("CONFIG_NET", [])[0], "net.config")
        self.assertIn("binfmt-misc.config", kw.fragments_setting("CONFIG_BINFMT_MISC", []))
        self.assertEqual(kw.fragments_setting("CONFIG_NO_SUCH_OPTION", []), [])


if __name__ == "__main__":
    unittest.main()
