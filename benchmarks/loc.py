"""Lines in the middle of the code (campaign/, scale/, notebook/) at a commit: issue 19's measure.

Two counts per package: every line (``wc -l``), and lines of code, where blank lines, comments and
docstrings do not count (a docstring is a string token standing alone as a statement, found with
``tokenize``). Both read the files of the commit from git, so any two commits compare alike.

    python benchmarks/loc.py              # HEAD
    python benchmarks/loc.py 2b6eb58      # before issue 19: 9,996 lines, 6,329 of code
"""

from __future__ import annotations

import argparse
import io
import subprocess
import tokenize

PACKAGES = ("campaign", "scale", "notebook")
_LAYOUT = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
_STATEMENT_START = {tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}


def code_lines(source: str) -> int:
    """The lines holding code: not blank, not only a comment, not part of a docstring.

    >>> code_lines("'''Doc.'''\\n\\n# note\\nx = 1  # one\\n")
    1
    """
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    lines: set[int] = set()
    previous = None  # the last token that is not a blank line or a comment
    for n, token in enumerate(tokens):
        following = tokens[n + 1] if n + 1 < len(tokens) else None
        if token.type in _LAYOUT:
            if token.type not in (tokenize.NL, tokenize.COMMENT):
                previous = token
            continue
        docstring = (token.type == tokenize.STRING and (previous is None or previous.type in _STATEMENT_START)
                     and following is not None and following.type == tokenize.NEWLINE)
        if not docstring:
            lines.update(range(token.start[0], token.end[0] + 1))
        previous = token
    return len(lines)


def _files(revision: str, package: str) -> list[str]:
    listed = subprocess.run(["git", "ls-tree", "-r", "--name-only", revision, f"src/sendframe/{package}/"],
                            capture_output=True, text=True, check=True).stdout.split()
    return [name for name in listed if name.endswith(".py")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revision", nargs="?", default="HEAD")
    revision = parser.parse_args(argv).revision
    total_lines = total_code = 0
    for package in PACKAGES:
        lines = code = 0
        for name in _files(revision, package):
            source = subprocess.run(["git", "show", f"{revision}:{name}"], capture_output=True, text=True,
                                    check=True).stdout
            lines += source.count("\n")
            code += code_lines(source)
        print(f"{package:10s} {lines:7,d} lines {code:7,d} of code")
        total_lines, total_code = total_lines + lines, total_code + code
    print(f"{'total':10s} {total_lines:7,d} lines {total_code:7,d} of code   ({revision})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
