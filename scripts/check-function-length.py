#!/usr/bin/env python3
"""Every function body in the product's sources (not tests, not benchmarks) is at most
100 lines (CONTRIBUTING.md: split a longer one along its steps). Prints the ones over the
limit, longest first, and exits 1 when there are any.

  scripts/check-function-length.py [--limit 100] [--list N]   (from the repository)

A body is a brace block whose opening line (or the line before it) holds a parameter list
and that is not inside another function: free functions, member functions, lambdas at
namespace scope. Strings, characters, raw strings and comments are blanked first.
"""
import argparse
import os
import re
import subprocess
import sys

CONTROL = re.compile(r'^\s*(\}?\s*else|if|for|while|switch|do|try|catch)\b')
SCOPE = re.compile(r'\b(namespace|class|struct|enum|union)\b[^()]*$')


def blank(text):
    """The text with comments, string and character literals (raw strings too) blanked,
    newlines kept so that line numbers stay."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('//', i):
            j = text.find('\n', i)
            i = n if j < 0 else j
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif c == 'R' and text.startswith('"', i + 1) and (i == 0 or not text[i - 1].isalnum()):
            m = re.match(r'R"([^()\\ ]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(')' + m.group(1) + '"', i)
            end = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:end]))
            i = end
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            out.append(' ' * (min(j, n - 1) - i + 1))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def long_functions(path, limit):
    text = blank(open(path, encoding='utf-8', errors='replace').read())
    lines = text.split('\n')
    stack = []  # (kind, first line)
    found = []
    for number, line in enumerate(lines):
        for ch in line:
            if ch == '{':
                context = line if ('(' in line or ')' in line) else (lines[number - 1] if number else '')
                in_function = any(kind == 'fn' for kind, _ in stack)
                if SCOPE.search(line) or re.match(r'\s*(namespace|class|struct|enum|union)\b', line):
                    kind = 'scope'
                elif (not in_function and ('(' in context or ')' in context)
                      and not CONTROL.match(context) and '=' not in context.split('(')[0]):
                    kind = 'fn'
                else:
                    kind = 'block'
                stack.append((kind, number))
            elif ch == '}' and stack:
                kind, first = stack.pop()
                if kind == 'fn' and number - first + 1 > limit:
                    found.append((number - first + 1, path, first + 1))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--limit', type=int, default=100)
    ap.add_argument('--list', type=int, default=0, help='also list the N longest under the limit')
    args = ap.parse_args()
    os.chdir(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    files = subprocess.run(['git', 'ls-files', '*.cpp', '*.h'], capture_output=True, text=True,
                           check=True).stdout.split()
    files = [f for f in files if not f.startswith(('tests/', 'bench/'))]
    over = sorted((x for f in files for x in long_functions(f, args.limit)), reverse=True)
    for length, path, line in over:
        print('%s:%d: a function of %d lines (limit %d): split it along its steps'
              % (path, line, length, args.limit))
    if args.list:
        near = sorted((x for f in files for x in long_functions(f, 0)), reverse=True)
        for length, path, line in [x for x in near if x[0] <= args.limit][:args.list]:
            print('  %4d lines  %s:%d' % (length, path, line))
    print('%d function(s) over %d lines in %d files' % (len(over), args.limit, len(files)))
    return 1 if over else 0


if __name__ == '__main__':
    sys.exit(main())
