#!/usr/bin/env python3
"""Checks that a man page documents every long flag its program's --help shows.

  check-man-flags.py PROGRAM MANPAGE

Collects every `--flag` of `PROGRAM --help` and, recursively, of each subcommand's --help
(as make-man.py walks them), renders MANPAGE to plain text with man(1) and names each flag
the page lacks. Exit 0 when none is missing, 1 otherwise. Prints the number of flags checked.
"""
import importlib.util
import os
import re
import subprocess
import sys


def load_make_man():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "make-man.py")
    spec = importlib.util.spec_from_file_location("make_man", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def flags_of(mm, argv, env, where, out):
    text = mm.help_of(argv, env)
    for flag in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*[a-z0-9]", text):
        out.setdefault(flag, " ".join(where))
    for name in mm.subcommands(text):
        flags_of(mm, argv + [name], env, where + [name], out)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    program, page = os.path.abspath(sys.argv[1]), sys.argv[2]
    mm = load_make_man()
    env = mm.program_env(os.path.dirname(program))
    flags = {}
    name = os.path.basename(program)
    flags_of(mm, [name], env, [name], flags)
    # A wide page and no hyphenation: each flag stays whole on one line.
    render_env = dict(env, MANWIDTH="1000", MANROFFOPT="-rHY=0")
    text = subprocess.run(["man", "-E", "ascii", "-l", page], env=render_env, check=True,
                          stdout=subprocess.PIPE, text=True).stdout
    text = re.sub(r".\x08", "", text)
    words = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*[a-z0-9]", text))
    missing = sorted(f for f in flags if f not in words)
    for f in missing:
        print("%s: %s (from `%s --help`) is not in the man page" % (page, f, flags[f]))
    print("%s: %d long flags of %s checked, %d missing" % (page, len(flags), name, len(missing)))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
