"""What a skill file's text must be before anything parses it.

Every layer that reads a skill file parses it in its own way: libcst for the
``SKILL`` literal, ``ast`` for the sandbox policy, RestrictedPython to run it,
and Python's own importer when ``import skills`` is used. They must all see the
same code, and none of them may be crashed by the file. So, before any parser:

* the bytes are UTF-8 (no BOM, no NUL) with no coding declaration (PEP 263): the
  importer honours ``# -*- coding: utf-7 -*-`` where skillforge reads UTF-8, so
  ``+AAo-`` would be a line break to one and text to the other;
* the file and its lines are of bounded size;
* the nesting of its expressions, estimated from ``tokenize`` (which cannot
  recurse), is bounded: libcst, RestrictedPython and the policy walk the tree
  recursively, and a deep enough expression exhausts the stack (libcst
  segfaults at ~10,000 unary operators and takes minutes for 3,000 subscripts).

``source_problem(data)`` returns what is wrong, or None; it never raises.
"""

from __future__ import annotations

import io
import re
import tokenize

__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_LINE", "decode_source", "nesting_depth", "source_problem"]

# Measured (Python 3.11.7, default recursion limit 1000), for an expression at the top of a
# function, nesting n of unary minus / chained subscripts / a+b+... / f()()...:
#   RestrictedPython compile: ok at n=200, RecursionError at n=250 (~4 frames a level)
#   libcst parse + code_for_node: ok at n=400, RecursionError at n=600; 3,000 subscripts take
#     19 s; 10,000 unary operators segfault the process
#   ast.parse / compile: ok at n=1,000, RecursionError (or MemoryError) at n=3,000
# Generated skills (skills/, tests/golden/, a tau-bench retail library) estimate at most
# 20 (see tests/test_hardening_gate.py); 100 leaves 5x headroom over them and 2.5x under
# RestrictedPython, with room for the caller's own stack (solve() runs inside user code).
MAX_DEPTH = 100
# The largest generated skill file seen is ~60 KB and its longest line ~3 KB (a guard listing
# learned combinations); a file of 1 MB tokenizes in ~1 s, parsed by libcst in ~4 s.
MAX_BYTES = 512 * 1024
MAX_LINE = 20_000

# PEP 263: a comment on line 1 or 2 that declares the file's encoding (Python's tokenizer uses this regex)
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.ASCII)
_BLANK_OR_COMMENT = re.compile(rb"^[ \t\f]*(?:[#\r\n]|$)", re.ASCII)

# tokens that make one node the child of another within one element of a bracket
_LINK_OPS = frozenset(
    "+ - * / // % @ ** ~ < > <= >= == != << >> & | ^ . -> :=".split()
)
_LINK_WORDS = frozenset({"not", "and", "or", "in", "is", "if", "else", "lambda", "await", "for", "yield", "from"})
_OPEN = frozenset("([{")
_CLOSE = frozenset(")]}")
_FSTRING_PREFIX = re.compile(r"^[rRbBuU]*[fF]")
_FSTRING_LINKS = re.compile(r"[-+*/%@<>=!~.&|^(\[{:]|\bnot\b|\band\b|\bor\b|\bif\b|\blambda\b")


def decode_source(data: bytes) -> tuple[str | None, str | None]:
    """``(text, None)`` for the bytes of an acceptable skill file, else ``(None, what is wrong)``."""
    if data.startswith(b"\xef\xbb\xbf"):
        return None, "starts with a byte-order mark: save it as UTF-8 without a BOM"
    lines = data.split(b"\n", 2)
    for i, line in enumerate(lines[:2]):
        if _COOKIE.match(line):
            return None, (
                f"line {i + 1} declares a source encoding ({_COOKIE.match(line)[1].decode('ascii', 'replace')!r}); "  # type: ignore[index]
                "skill files are UTF-8 with no coding declaration: Python would read it in the declared "
                "encoding and run other code than skillforge checks. Remove the declaration"
            )
        if not _BLANK_OR_COMMENT.match(line):
            break  # only a comment or blank line 1 lets line 2 declare it
    if b"\0" in data:
        return None, "contains a NUL byte: skill files are text"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return None, f"is not UTF-8 (byte {e.start}: {e.reason})"
    return text, None


def source_problem(text: str) -> str | None:
    """What makes ``text`` unsafe to hand to a parser (size, line length, nesting), or None."""
    size = len(text.encode("utf-8"))
    if size > MAX_BYTES:
        return f"is {size} bytes; skill files are at most {MAX_BYTES} (split the skill)"
    if "\r" in text.replace("\r\n", ""):
        return "contains a carriage return that ends no line: Python reads it as a line break, reviewers may not"
    longest = max((len(line) for line in text.split("\n")), default=0)
    if longest > MAX_LINE:
        return f"has a line of {longest} characters; skill files have lines of at most {MAX_LINE}"
    depth = nesting_depth(text)
    if depth > MAX_DEPTH:
        return (
            f"nests expressions about {depth} deep; skill files nest at most {MAX_DEPTH} "
            "(deeper code would exhaust the parsers' stack), so it is never parsed or run"
        )
    return None


def nesting_depth(text: str) -> int:
    """An upper estimate of the syntax tree's depth, from tokens alone (up to a tokenizing error,
    which the parsers then report).

    Within one element of a bracket (between commas), each operator, keyword operator, ``.``
    and trailer (``x[...]``, ``f(...)``) may put the rest one level deeper; each open bracket and
    each indented block does. An f-string counts the brackets and operators inside it.
    """
    levels = [0]  # links so far in the current element, per open bracket
    depth = best = 0
    indent = 0
    chains = [0]  # per indentation level: the ``elif`` clauses so far (each nests in the one before)
    line_start = True
    prev: tokenize.TokenInfo | None = None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            kind, s = tok.type, tok.string
            if line_start and kind not in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
                line_start = False
                del chains[indent + 1 :]
                chains += [0] * (indent + 1 - len(chains))
                if s == "elif":
                    chains[indent] += 1
                elif s != "else":
                    chains[indent] = 0
            if kind == tokenize.INDENT:
                indent += 1
            elif kind == tokenize.DEDENT:
                indent -= 1
            elif kind in (tokenize.NEWLINE, tokenize.ENDMARKER) or s == ";":
                levels, depth = [0], 0
                line_start = True
            elif kind == tokenize.OP and s in _OPEN:
                if prev is not None and (prev.type in (tokenize.NAME, tokenize.STRING, tokenize.NUMBER) or prev.string in _CLOSE):
                    levels[-1] += 1  # a trailer: the call or subscript holds what it applies to
                    depth += 1
                levels.append(0)
                depth += 1
            elif kind == tokenize.OP and s in _CLOSE:
                if len(levels) > 1:
                    depth -= levels.pop() + 1
            elif kind == tokenize.OP and s == ",":
                depth -= levels[-1]
                levels[-1] = 0
            elif (kind == tokenize.OP and s in _LINK_OPS) or (kind == tokenize.NAME and s in _LINK_WORDS):
                levels[-1] += 1
                depth += 1
            elif kind == tokenize.STRING and _FSTRING_PREFIX.match(s):
                best = max(best, indent + sum(chains) + depth + 1 + len(_FSTRING_LINKS.findall(s)))
            if kind not in (tokenize.NL, tokenize.COMMENT):
                prev = tok
            best = max(best, indent + sum(chains) + depth)
    except (tokenize.TokenError, SyntaxError):
        pass  # the parsers report the error; what came before it still counts
    return best
