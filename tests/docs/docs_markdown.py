"""Reads livemon's documentation (README.md and docs/*.md) the way the doc tests need it: code
blocks with their example markers, links, GitHub's heading anchors, and the command lines that
name livemonctl or livemon.

An example is a ```cpp or ```python block whose previous line is a marker

    <!-- example: LANG MODE [output="TEXT"] [requires=MODULE] -->

LANG is cpp or python; MODE is run (compile and run it, exit status 0) or compile (only compile it,
for an example that needs a running peer). output="TEXT": a C++ example's output must hold TEXT.
requires=MODULE: a Python example is skipped where MODULE cannot be imported. A Python example's
lines `print(...)  # TEXT` say what it prints: its output must be those TEXTs, line for line.
tests/docs/CMakeLists.txt reads the same markers for the C++ examples."""

import os
import re
import shlex
from dataclasses import dataclass, field

SOURCE_DIR = os.environ.get("LIVEMON_SOURCE_DIR",
                            os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
MARKER = re.compile(r"^<!--\s*example:\s*(.*?)\s*-->\s*$")
EXAMPLE_LANGUAGES = ("cpp", "python")
MODES = ("run", "compile")


def documentation_files(root=SOURCE_DIR):
    """README.md and docs/*.md, as paths relative to `root`."""
    docs = sorted(name for name in os.listdir(os.path.join(root, "docs")) if name.endswith(".md"))
    return ["README.md"] + [f"docs/{name}" for name in docs]


@dataclass
class CodeBlock:
    path: str              # relative to the source root
    line: int              # 1-based line of the opening fence
    language: str          # the fence's info string ("" when none)
    code: str
    marker: str | None     # the text of an example marker on the line before, if any


@dataclass
class Example:
    path: str
    line: int
    language: str
    mode: str
    code: str
    output: str | None = None
    requires: str | None = None


@dataclass
class Document:
    path: str
    lines: list
    blocks: list = field(default_factory=list)
    prose: list = field(default_factory=list)  # (line number, text) of every line outside code blocks


def read_document(path, root=SOURCE_DIR):
    with open(os.path.join(root, path), encoding="utf-8") as f:
        lines = f.read().split("\n")
    document = Document(path, lines)
    index = 0
    while index < len(lines):
        fence = FENCE.match(lines[index])
        if not fence:
            document.prose.append((index + 1, lines[index]))
            index += 1
            continue
        indent, ticks, language = fence.groups()
        start = index
        index += 1
        body = []
        while index < len(lines) and not re.match(rf"^\s*{re.escape(ticks[0])}{{{len(ticks)},}}\s*$", lines[index]):
            body.append(lines[index][len(indent):] if lines[index].startswith(indent) else lines[index].lstrip())
            index += 1
        index += 1  # the closing fence
        previous = lines[start - 1].strip() if start > 0 else ""
        marker = MARKER.match(previous)
        document.blocks.append(CodeBlock(path, start + 1, language, "\n".join(body) + "\n",
                                         marker.group(1) if marker else None))
    return document


def parse_marker(text):
    """(language, mode, {attribute: value}) of a marker's text, or a ValueError naming the fault."""
    words = shlex.split(text)
    if len(words) < 2 or words[0] not in EXAMPLE_LANGUAGES or words[1] not in MODES:
        raise ValueError(f"'{text}' is not 'LANG MODE ...' with LANG in {EXAMPLE_LANGUAGES} and MODE in {MODES}")
    attributes = {}
    for word in words[2:]:
        key, separator, value = word.partition("=")
        if not separator or key not in ("output", "requires"):
            raise ValueError(f"'{word}' in '{text}' is not output=\"TEXT\" or requires=MODULE")
        attributes[key] = value
    return words[0], words[1], attributes


def examples(root=SOURCE_DIR, language=None):
    """Every marked example of the documentation (of one language, if given)."""
    found = []
    for path in documentation_files(root):
        for block in read_document(path, root).blocks:
            if block.language not in EXAMPLE_LANGUAGES or block.marker is None:
                continue
            lang, mode, attributes = parse_marker(block.marker)
            if language is None or lang == language:
                found.append(Example(path, block.line, lang, mode, block.code, attributes.get("output"),
                                     attributes.get("requires")))
    return found


def expected_prints(code):
    """What a Python example says it prints: the comment of each top-level `print(...)  # TEXT` line."""
    return [line.split("#", 1)[1].strip() for line in code.splitlines()
            if line.startswith("print(") and "#" in line]


# Links and anchors.

INLINE_CODE = re.compile(r"(`+)(.+?)\1")
INLINE_LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEFINITION = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
HTML_LINK = re.compile(r"<(?:a|img)\b[^>]*?\s(?:href|src)=\"([^\"]+)\"", re.I)
HTML_ANCHOR = re.compile(r"<a\b[^>]*?\s(?:name|id)=\"([^\"]+)\"", re.I)
ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")


def github_anchor(heading):
    """The anchor GitHub gives a heading's text: the rendered text, lowercased, without punctuation
    (letters, digits, '_', '-' and spaces stay), each space a '-'."""
    text = re.sub(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = INLINE_CODE.sub(lambda m: m.group(2).strip(), text)
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(document):
    """Every anchor a document offers: its headings' (with GitHub's -1, -2 for repeats) and HTML ids."""
    found = set()
    seen = {}
    previous = ""
    for _, line in document.prose:
        heading = None
        atx = ATX_HEADING.match(line)
        if atx:
            heading = atx.group(2)
        elif re.match(r"^ {0,3}(=+|-+)\s*$", line) and previous.strip() and not previous.lstrip().startswith(("|", "-", "*", ">")):
            heading = previous.strip()  # a setext heading: the line above, underlined
        if heading is not None:
            anchor = github_anchor(heading)
            count = seen.get(anchor, 0)
            found.add(anchor if count == 0 else f"{anchor}-{count}")
            seen[anchor] = count + 1
        found.update(HTML_ANCHOR.findall(line))
        previous = line
    return found


def links(document):
    """(line, target) of every link and image of a document, outside code."""
    found = []
    for number, line in document.prose:
        text = INLINE_CODE.sub(lambda m: " " * len(m.group(0)), line)
        for match in INLINE_LINK.finditer(text):
            found.append((number, match.group(2)))
        definition = REFERENCE_DEFINITION.match(text)
        if definition:
            found.append((number, definition.group(1)))
        found.extend((number, target) for target in HTML_LINK.findall(text))
    return found


def broken_links(root=SOURCE_DIR, paths=None):
    """'PATH:LINE: TARGET: why' for every link of the documentation that points to no file, to a
    file outside the repository, or to an anchor its Markdown file does not have."""
    paths = paths if paths is not None else documentation_files(root)
    root = os.path.realpath(root)
    documents = {}

    def document(path):
        if path not in documents:
            documents[path] = read_document(path, root)
        return documents[path]

    problems = []
    for path in paths:
        for number, target in links(document(path)):
            if not target or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                continue  # a URL (https:, mailto:): not checked here
            file_part, _, anchor = target.partition("#")
            if file_part:
                resolved = os.path.realpath(os.path.join(root, os.path.dirname(path), file_part))
                if resolved != root and not resolved.startswith(root + os.sep):
                    problems.append(f"{path}:{number}: {target}: points outside the repository")
                    continue
                if not os.path.exists(resolved):
                    problems.append(f"{path}:{number}: {target}: no such file")
                    continue
                target_path = os.path.relpath(resolved, root)
            else:
                target_path = path
            if anchor and target_path.endswith(".md") and os.path.isfile(os.path.join(root, target_path)):
                if anchor not in anchors(document(target_path)):
                    problems.append(f"{path}:{number}: {target}: {target_path} has no heading with the anchor #{anchor}")
    return problems


# Command lines.

SHELL_LANGUAGES = ("", "sh", "shell", "bash", "console")


def command_lines(document):
    """(line, text) of every piece of a document that may hold a command: each line of a shell code
    block (continued lines joined, comments cut) and each inline code span."""
    found = []
    for block in document.blocks:
        if block.language not in SHELL_LANGUAGES:
            continue
        joined, first = "", None
        for offset, line in enumerate(block.code.splitlines()):
            line = re.sub(r"(^|\s)#.*$", "", line)  # a shell comment
            if first is None:
                first = block.line + 1 + offset
            if line.rstrip().endswith("\\"):
                joined += line.rstrip()[:-1] + " "
                continue
            found.append((first, joined + line))
            joined, first = "", None
    for number, line in document.prose:
        for match in INLINE_CODE.finditer(line):
            found.append((number, match.group(2)))
    return found


def command_mentions(document, program):
    """(line, command or None, [options]) for each invocation of `program` (livemonctl or livemon)
    in a document's command lines: the command is livemonctl's first word after the program, the
    options every --word up to the end of that command (a pipe, ;, & or the end of the line)."""
    found = []
    invocation = re.compile(rf"(?:^|[\s/(=])({re.escape(program)})(?=\s|$)")
    for number, text in command_lines(document):
        for match in invocation.finditer(text):
            rest = re.split(r"\s(?:\||;|&&?|\|\|)(?:\s|$)|\s&$", text[match.end():])[0]
            words = rest.split()
            command = None
            if program == "livemonctl" and words and re.fullmatch(r"[a-z][a-z-]*", words[0]):
                command = words[0]
            options = [re.match(r"--?[\w-]+", word).group(0) for word in words
                       if re.match(r"--[\w-]+|-[a-zA-Z]$", word)]
            found.append((number, command, options))
    return found
