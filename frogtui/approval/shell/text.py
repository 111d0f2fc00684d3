"""Reading shell text the parser leaves raw: ANSI-C quoting (``$'\\x72m'``), the expansions inside
``${...}`` (``${v=`cmd`}``, ``${v@P}``, ``${!x}``), and the pieces of a command the parser cannot
read (what it could hide). Pure."""

from __future__ import annotations

import re
import shlex

_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def ansi_c_word(raw: str) -> str | None:
    """The text of a word written with ANSI-C quoting (``$'/home/u/.ssh/id'``), quotes removed and
    escapes decoded; None when the word holds any other expansion (then it is not known)."""
    out: list[str] = []
    n = 0
    while n < len(raw):
        ch = raw[n]
        if raw.startswith("$'", n):
            end, text = _ansi_c_body(raw, n + 2)
            if end < 0:
                return None
            out.append(text)
            n = end + 1
        elif ch == "'":
            end = raw.find("'", n + 1)
            if end < 0:
                return None
            out.append(raw[n + 1 : end])
            n = end + 1
        elif ch == '"':
            end = n + 1
            while end < len(raw) and raw[end] != '"':
                if raw[end] in "$`":
                    return None
                end += 2 if raw[end] == "\\" else 1
            if end >= len(raw):
                return None
            out.append(re.sub(r'\\([$`"\\\n])', r"\1", raw[n + 1 : end]))
            n = end + 1
        elif ch in "$`":
            return None
        elif ch == "\\" and n + 1 < len(raw):
            out.append(raw[n + 1])
            n += 2
        else:
            out.append(ch)
            n += 1
    return "".join(out)


def _ansi_c_body(raw: str, n: int) -> tuple[int, str]:
    """Decode ``$'...'`` from just after its opening quote: (index of the closing quote, text)."""
    out: list[str] = []
    while n < len(raw):
        ch = raw[n]
        if ch == "'":
            return n, "".join(out)
        if ch != "\\" or n + 1 >= len(raw):
            out.append(ch)
            n += 1
            continue
        code = raw[n + 1]
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            n += 2
        elif code in "xuU":
            size = {"x": 2, "u": 4, "U": 8}[code]
            digits = re.match(f"[0-9A-Fa-f]{{1,{size}}}", raw[n + 2 :])
            out.append(chr(int(digits.group(), 16)) if digits else "\\" + code)
            n += 2 + (len(digits.group()) if digits else 0)
        elif code in "01234567":
            digits = re.match(r"[0-7]{1,3}", raw[n + 1 :])
            assert digits is not None
            out.append(chr(int(digits.group(), 8) & 0xFF))
            n += 1 + len(digits.group())
        elif code == "c" and n + 2 < len(raw):
            out.append(chr(ord(raw[n + 2]) & 0x1F))
            n += 3
        else:
            out.append("\\" + code)
            n += 2
    return -1, ""


def parameter_trouble(value: str) -> str | None:
    """Why ``${value}`` is only known when it runs beyond an ordinary variable, or None: prompt
    expansion (``@P``) runs the command substitutions in the value, ``${!x}`` names another variable."""
    if value.startswith("!") and len(value) > 1:
        return f"${{{value}}} expands a variable named by another variable, only known when it runs"
    if "@P" in value:
        return f"${{{value}}} is prompt expansion, which runs the command substitutions the value holds"
    arithmetic = _ARITHMETIC_PARAMETER.match(value)
    if arithmetic and not all(re.fullmatch(r"\s*-?\d*\s*", part or "") for part in arithmetic.groups()):
        return f"${{{value}}} evaluates arithmetic, which runs the command substitutions a variable holds (a[$(cmd)])"
    return None


_ARITHMETIC_PARAMETER = re.compile(r"#?[A-Za-z_][A-Za-z0-9_]*(?:\[(?![@*]\])([^\]]*)\])?(?::(?![-=?+])([^:}]*)(?::(.*))?)?$", re.S)
"""``${a[SUB]}`` and ``${v:OFFSET:LENGTH}``: a subscript of an indexed array and an offset or a
length are arithmetic (a plain number is fine; ``${v:-x}`` is a default, not an offset)."""


def substitutions(text: str) -> list[str]:
    """The commands inside ``$( )`` and backticks in ``text`` (as far as they can be found)."""
    found: list[str] = []
    n = 0
    while n < len(text):
        if text.startswith("$(", n) and not text.startswith("$((", n):
            depth, end = 1, n + 2
            while end < len(text) and depth:
                depth += {"(": 1, ")": -1}.get(text[end], 0)
                end += 1
            found.append(text[n + 2 : end - 1])
            n = end
        elif text[n] == "`":
            end = text.find("`", n + 1)
            if end < 0:
                break
            found.append(text[n + 1 : end])
            n = end + 1
        else:
            n += 1
    return found


def hidden_pieces(text: str) -> list[str]:
    """Commands a text the parser cannot read may still hold: its substitutions (also inside
    ``$(( ))``) and the pieces between ``;``, ``&&``, ``||``, ``|``, newlines, parentheses, braces,
    ``;;`` and after ``coproc`` (which the parser does not know)."""
    pieces = substitutions(text)
    pieces += [p for p in re.split(r";;|&&|\|\||[;|\n(){}`]|\bdo\b|\bthen\b|\belse\b|\bin\b|\bcoproc\b", text) if p.strip()]
    return list(dict.fromkeys(p.strip() for p in pieces if p.strip() and p.strip() != text.strip()))


def dequote(raw: str, fallback: str) -> str:
    """``raw`` with quotes removed as the shell would, when it is one word; else ``fallback``."""
    try:
        tokens = shlex.split(raw)
    except ValueError:
        return str(fallback)
    return tokens[0] if len(tokens) == 1 else str(fallback)
