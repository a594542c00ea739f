#!/usr/bin/env python3
"""Every file the product reads or writes goes through the OS seams of ibc_os (os/: Filesystem,
RootedFilesystem, FileWriter, CommandRunner, Clock): a tenant's tree, a bundle, a key file
are hostile input, and the seams bound, root and name every access (CONTRIBUTING.md, habit 2).
Fails on std::ifstream/ofstream/fstream, fopen, QFile/QSaveFile, std::filesystem, opendir
and a raw ::open( in the product's sources outside os/src/, except the places listed in
scripts/seams-allowlist.txt, each with its reason. Prints each offending line and exits 1.

  scripts/check-seams.py            (from anywhere in the repository)
"""
import os
import re
import subprocess
import sys

ROOMS = ('agent/', 'support/', 'core/', 'client/', 'bundle/', 'collector/', 'console/', 'os/')
ADAPTERS = 'os/src/'
PATTERN = re.compile(
    r'std::(i|o)?fstream\b|\bfopen\s*\(|\bQ(Save)?File\b|std::filesystem\b|'
    r'\bopendir\s*\(|(^|[^\w:])::open\s*\(')


def code_of(line):
    """The line without a trailing // comment and without string literals."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    return line.split('//', 1)[0]


def allowlist(top):
    allowed = {}
    with open(os.path.join(top, 'scripts', 'seams-allowlist.txt'), encoding='utf-8') as f:
        for raw in f:
            line = raw.strip()
            if not line or line.startswith('#'):
                continue
            path, _, reason = line.partition(':')
            if not reason.strip():
                sys.exit(f'seams-allowlist.txt: {path} has no reason')
            allowed[path.strip()] = reason.strip()
    return allowed


def main():
    top = subprocess.run(['git', 'rev-parse', '--show-toplevel'], capture_output=True,
                         text=True, check=True).stdout.strip()
    files = subprocess.run(['git', 'ls-files', '-co', '--exclude-standard', '--', '*.cpp',
                            '*.h'], capture_output=True, text=True, check=True,
                           cwd=top).stdout.split()
    allowed = allowlist(top)
    bad = []
    for path in files:
        if not path.startswith(ROOMS) or path.startswith(ADAPTERS) or path in allowed:
            continue
        with open(os.path.join(top, path), encoding='utf-8', errors='replace') as f:
            for number, line in enumerate(f, 1):
                if PATTERN.search(code_of(line)):
                    bad.append(f'{path}:{number}: {line.strip()}')
    stale = [p for p in allowed if p not in files]
    for p in stale:
        print(f'seams-allowlist.txt names {p}, which is not a tracked source: remove the line')
    for b in bad:
        print(b)
    if bad:
        print(f'{len(bad)} file access(es) outside the seams of ibc_os (os/include/ibc/os/os.h): '
              'read through a Filesystem, write through a FileWriter, or add the file to '
              'scripts/seams-allowlist.txt with the reason it cannot')
    return 1 if bad or stale else 0


if __name__ == '__main__':
    sys.exit(main())
