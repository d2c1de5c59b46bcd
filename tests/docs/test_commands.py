"""The livemonctl and livemon command lines of README.md and docs/*.md use commands and options
that exist (their own --help is the source of truth), and the command reference, docs/commands.md,
names every command and option there is."""

import os
import re
import subprocess

import pytest

from docs_markdown import SOURCE_DIR, command_mentions, documentation_files, read_document

LIVEMONCTL = os.environ.get("LIVEMONCTL", "")
DASHBOARD = os.environ.get("LIVEMON_DASHBOARD", "")
REFERENCE = "docs/commands.md"

if not LIVEMONCTL:
    pytest.skip("LIVEMONCTL names no livemonctl program", allow_module_level=True)


def help_text(*arguments, program=LIVEMONCTL):
    result = subprocess.run([program, *arguments, "--help"], capture_output=True, text=True, timeout=30,
                            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert result.returncode == 0, f"{program} {' '.join(arguments)} --help failed: {result.stderr}"
    return result.stdout


def options_in_help(text):
    """The options a --help text lists: every -x and --word at the start of an option line."""
    options = set()
    for line in text.splitlines():
        if re.match(r"^\s+-", line):
            spec = re.split(r"\s{2,}", line.strip())[0]  # "-o,--output FILE", before the description
            options.update(re.findall(r"(?:^|[\s,])(--?[A-Za-z][\w-]*)", spec))
    return options


def livemonctl_commands():
    text = help_text()
    listing = text.split("Subcommands:", 1)[1]
    return [match.group(1) for match in re.finditer(r"^\s{2}([a-z][a-z-]*)\s", listing, re.M)]


COMMANDS = livemonctl_commands()
OPTIONS = {command: options_in_help(help_text(command)) for command in COMMANDS}
TOP_LEVEL = options_in_help(help_text())


def test_livemonctl_has_the_commands_the_docs_rely_on():
    # A sanity check of the help parsing: these commands are older than this test.
    assert {"demo", "tail", "watch", "record", "info", "export", "replay", "relay", "ranks", "keygen"} <= set(COMMANDS)
    assert {"--endpoint", "--ranks", "--help"} <= OPTIONS["demo"]
    assert {"-o", "--output", "--filter"} <= OPTIONS["record"]


def test_every_livemonctl_command_and_option_the_docs_use_exists():
    problems = []
    for path in documentation_files(SOURCE_DIR):
        for line, command, options in command_mentions(read_document(path, SOURCE_DIR), "livemonctl"):
            if command is not None and command not in OPTIONS:
                problems.append(f"{path}:{line}: livemonctl has no command '{command}'")
                continue
            known = OPTIONS[command] if command is not None else TOP_LEVEL
            problems += [f"{path}:{line}: livemonctl {command or ''} has no option {option}".replace("  ", " ")
                         for option in options if option not in known]
    assert problems == [], "\n".join(problems)


@pytest.mark.skipif(not DASHBOARD, reason="LIVEMON_DASHBOARD names no livemon program (built without the ui)")
def test_every_livemon_option_the_docs_use_exists():
    known = options_in_help(help_text(program=DASHBOARD))
    assert {"--baseline", "--view", "--help"} <= known
    problems = [f"{path}:{line}: livemon has no option {option}"
                for path in documentation_files(SOURCE_DIR)
                for line, _, options in command_mentions(read_document(path, SOURCE_DIR), "livemon")
                for option in options if option not in known]
    assert problems == [], "\n".join(problems)


def reference_sections():
    """{heading: text} of the command reference's sections (### and ## headings alike)."""
    with open(os.path.join(SOURCE_DIR, REFERENCE), encoding="utf-8") as f:
        text = f.read()
    parts = re.split(r"^(#{2,3} .*)$", text, flags=re.M)
    return {parts[i].lstrip("# ").strip(): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def options_named(text):
    return set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", text))


def test_the_command_reference_names_every_livemonctl_command_and_option():
    sections = reference_sections()
    problems = []
    for command in COMMANDS:
        heading = f"`livemonctl {command}`"
        if heading not in sections:
            problems.append(f"{REFERENCE} has no section ### {heading}")
            continue
        missing = OPTIONS[command] - {"-h", "--help"} - options_named(sections[heading])
        problems += [f"{REFERENCE}, ### {heading}: {option} is missing" for option in sorted(missing)]
    missing = TOP_LEVEL - options_named(sections.get("livemonctl", ""))
    problems += [f"{REFERENCE}, ## livemonctl: {option} is missing" for option in sorted(missing)]
    assert problems == [], "\n".join(problems)


@pytest.mark.skipif(not DASHBOARD, reason="LIVEMON_DASHBOARD names no livemon program (built without the ui)")
def test_the_command_reference_names_every_livemon_option():
    missing = options_in_help(help_text(program=DASHBOARD)) - options_named(reference_sections().get("livemon", ""))
    assert missing == set(), f"{REFERENCE}, ## livemon lacks {sorted(missing)}"
