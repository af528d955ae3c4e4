#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Add the rverbs crate to a rust-project.json made by the kernel.

The kernel's scripts/generate_rust_analyzer.py finds an external module's
crate roots only when the Kbuild or Makefile next to them names them; the
crate root of rverbs.ko is rust/rverbs.rs, named by the top-level Kbuild.
This adds it, with the same dependencies and cfgs the generator gives
external crates.
"""

import json
import pathlib
import sys


def main() -> None:
    project_file = pathlib.Path(sys.argv[1])
    root_module = pathlib.Path(sys.argv[2]).resolve()
    project = json.loads(project_file.read_text())
    crates = project["crates"]
    index = {crate["display_name"]: i for i, crate in enumerate(crates)}
    if any(crate["root_module"] == str(root_module) for crate in crates):
        return
    kernel = crates[index["kernel"]]
    deps = ["core", "kernel", "pin_init", "zerocopy", "zerocopy_derive"]
    crates.append({
        "display_name": root_module.stem,
        "root_module": str(root_module),
        "is_workspace_member": True,
        "deps": [{"crate": index[d], "name": d} for d in deps if d in index],
        "cfg": kernel["cfg"],
        "edition": kernel["edition"],
        "env": kernel["env"],
    })
    project_file.write_text(json.dumps(project, sort_keys=True, indent=4) + "\n")


if __name__ == "__main__":
    main()
