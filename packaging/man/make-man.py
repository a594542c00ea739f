#!/usr/bin/env python3
"""Writes PROGRAM's man page from its own --help and --version with help2man.

  make-man.py PROGRAM SECTION "one-line description" STATIC.h2m OUT.gz

help2man formats the top-level --help. A program with subcommands (CLI11's "Subcommands:"
list, nested as in `ibcollect bundle export`) gets a SUBCOMMANDS section holding each
subcommand's own --help, so every flag the program accepts is in the page; STATIC.h2m adds
the hand-written sections (FILES, SEE ALSO, ...). The page is gzipped with -9n (no name,
no time stamp) so an unchanged program gives a byte-identical file.

Run with the build's program: it is executed (QT_QPA_PLATFORM=offscreen for the console).
"""
import gzip
import os
import re
import subprocess
import sys
import tempfile


def program_env(bin_dir):
    env = dict(os.environ)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    # The console is a Qt program: no display is needed to print its help.
    env["QT_QPA_PLATFORM"] = "offscreen"
    env.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="ibc-man-xdg-"))
    env["COLUMNS"] = "80"
    env["LC_ALL"] = "C.UTF-8"
    # help2man's date: the fixed date of the changelog keeps the page reproducible.
    env.setdefault("SOURCE_DATE_EPOCH", "0")
    return env


def help_of(argv, env):
    r = subprocess.run(argv + ["--help"], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True, timeout=60)
    if r.returncode != 0:
        sys.exit("make-man: %s --help exited %d" % (" ".join(argv), r.returncode))
    return r.stdout


def subcommands(help_text):
    """Names in CLI11's "Subcommands:" block (entries indented by exactly two spaces)."""
    names, inside = [], False
    for line in help_text.splitlines():
        if line.strip() == "Subcommands:":
            inside = True
            continue
        if inside:
            if line and not line.startswith(" "):
                break
            m = re.match(r"^  ([a-z][a-z0-9-]*)(\s|$)", line)
            if m:
                names.append(m.group(1))
    return names


def own_part(help_text):
    """A subcommand's help without the program-wide footer (examples, exit codes) that
    the top-level help already holds."""
    out = []
    for line in help_text.splitlines():
        if line.startswith("Examples:") or line.startswith("Exit codes:"):
            break
        out.append(line)
    while out and not out[-1].strip():
        out.pop()
    return out


def footer_blocks(help_text):
    """The top-level help's "Examples:" block (lines up to a blank one) and its "Exit codes:"
    paragraph: help2man would fold them into the options or mangle the examples' columns."""
    examples, exit_codes, mode = [], [], None
    for line in help_text.splitlines():
        if line.startswith("Examples:"):
            mode = "examples"
            continue
        if line.startswith("Exit codes:"):
            mode = "exit"
            exit_codes.append(line[len("Exit codes:"):].strip())
            continue
        if not line.strip():
            mode = None
        elif mode == "examples":
            examples.append(line)
        elif mode == "exit":
            exit_codes.append(line.strip())
    return examples, " ".join(exit_codes)


def without_exit_paragraph(roff):
    """Drops help2man's rendering of the "Exit codes:" paragraph (moved to EXIT STATUS)."""
    out, skipping = [], False
    for line in roff.splitlines():
        if line.startswith("Exit codes:"):
            skipping = True
            continue
        if skipping and (line.startswith(".") or not line.strip()):
            skipping = False
        if not skipping:
            out.append(line)
    return "\n".join(out) + "\n"


def only_our_examples(roff):
    """help2man appends its own reading of the "Examples:" block (columns folded into one
    paragraph) to the verbatim one of the include: keep ours, up to its `.fi`."""
    lines = roff.splitlines()
    try:
        start = lines.index(".SH EXAMPLES")
        end_ours = lines.index(".fi", start)
    except ValueError:
        return roff
    stop = end_ours + 1
    while stop < len(lines) and not lines[stop].startswith(".SH"):
        stop += 1
    return "\n".join(lines[:end_ours + 1] + lines[stop:]) + "\n"


def roff_text(text):
    return text.replace("\\", "\\e").replace("-", "\\-")


def roff_verbatim(lines):
    res = [".nf"]
    for line in lines:
        line = line.replace("\\", "\\e").replace("-", "\\-")
        res.append("\\&" + line)
    res.append(".fi")
    return res


def walk(argv, env, section):
    for name in subcommands(help_of(argv, env)):
        sub = argv + [name]
        text = help_of(sub, env)
        section.append('.SS "%s"' % " ".join([os.path.basename(argv[0])] + sub[1:]))
        section.extend(roff_verbatim(own_part(text)))
        walk(sub, env, section)


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    program, man_section, description, static_include, out = sys.argv[1:]
    program = os.path.abspath(program)
    name = os.path.basename(program)
    env = program_env(os.path.dirname(program))

    include = [open(static_include).read().rstrip("\n")]
    examples, exit_codes = footer_blocks(help_of([name], env))
    if examples:
        include.append("[EXAMPLES]")
        include.extend(roff_verbatim(examples))
    if exit_codes:
        include.append("[EXIT STATUS]")
        include.append("\\&" + roff_text(exit_codes))
    sub = []
    walk([name], env, sub)
    if sub:
        include.append("[SUBCOMMANDS]")
        include.append("Each subcommand's own \\fB\\-\\-help\\fR:")
        include.extend(sub)
    with tempfile.TemporaryDirectory(prefix="ibc-man-") as tmp:
        inc_path = os.path.join(tmp, "include.h2m")
        with open(inc_path, "w") as f:
            f.write("\n".join(include) + "\n")
        page = os.path.join(tmp, "page")
        subprocess.run(["help2man", "--no-info", "--section", man_section, "--name", description,
                        "--include", inc_path, "--output", page, name],
                       env=env, check=True, timeout=120)
        roff = open(page, encoding="utf-8").read()
    roff = without_exit_paragraph(roff) if exit_codes else roff
    roff = only_our_examples(roff) if examples else roff
    # No hyphenation: a flag split at a line end is a flag nobody finds with a search.
    roff = re.sub(r"^(\.TH .*)$", r"\1\n.nh", roff, count=1, flags=re.M)
    data = roff.encode("utf-8")
    # Refuse an empty or failed page loudly: a stub man page is worse than none.
    if b".SH OPTIONS" not in data and b".SH DESCRIPTION" not in data:
        sys.exit("make-man: help2man produced no options for " + name)
    with open(out + ".tmp", "wb") as f:
        with gzip.GzipFile(filename="", mode="wb", fileobj=f, compresslevel=9, mtime=0) as gz:
            gz.write(data)
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    main()
