#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Runs test scripts one after another, each in a process of its own forked
from this one, which has imported what they import: the script starts in
milliseconds, not seconds (in the debug lane's guest Python takes 1.1 s to
start and pyverbs 2.2 s more to import; a test of rc_lib.sh runs ten to
fourteen scripts). rc_lib.sh's `script` starts it, one per test.

    script_runner.py LIMIT

Reads requests from stdin, one a line, its fields separated by tabs: the
file for the script's output, the script, its arguments. For each, it
imports the modules the script imports at its top level (parsed, not run),
then forks; the child runs the script as __main__, its stdout and stderr
in the file, its stdin /dev/null, with argv and sys.path[0] as a fresh
interpreter's, and is killed by SIGALRM after LIMIT seconds. What was
forked dies with the script: each script opens its own devices, and its
exit closes them as before. The line written back is the child's exit
status, as the shell reports one: 124 when the limit killed it (as
timeout(1)), 128+N for another signal N.
"""

import ast
import importlib
import os
import runpy
import signal
import sys
import traceback


def preimport(path):
    """Imports the modules `path` imports at its top level, here in the
    parent; a module that fails to import is left to the script."""
    try:
        with open(path) as f:
            tree = ast.parse(f.read(), path)
    except (OSError, SyntaxError):
        return
    for node in tree.body:
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            try:
                importlib.import_module(name)
            except Exception:  # pylint: disable=broad-except
                pass


def child(out, path, args, limit):
    """The forked child: `path` with `args`, its output in `out`; never
    returns."""
    code = 1
    try:
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        os.close(null)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.alarm(limit)
        sys.argv = [path] + args
        sys.path[0] = os.path.dirname(os.path.abspath(path))
        try:
            runpy.run_path(path, run_name="__main__")
            code = 0
        except SystemExit as e:
            if e.code is None:
                code = 0
            elif isinstance(e.code, int):
                code = e.code
            else:
                print(e.code, file=sys.stderr)
                code = 1
        except BaseException:  # pylint: disable=broad-except
            traceback.print_exc()
            code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code & 0xff)


def status(wait):
    """The shell's exit status of a child's wait status."""
    code = os.waitstatus_to_exitcode(wait)
    if code == -signal.SIGALRM:
        return 124
    return 128 - code if code < 0 else code


def main(argv):
    if len(argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    limit = int(argv[1])
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    for line in sys.stdin:
        fields = line.rstrip("\n").split("\t")
        if len(fields) < 2:
            print(2, flush=True)
            continue
        out, path, args = fields[0], fields[1], fields[2:]
        preimport(path)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            child(out, path, args, limit)
        _, wait = os.waitpid(pid, 0)
        print(status(wait), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
