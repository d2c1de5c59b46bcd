"""No link of README.md or docs/*.md points to a missing file or a missing heading anchor, and the
checker itself finds links planted broken."""

import os

import pytest

from docs_markdown import SOURCE_DIR, broken_links, github_anchor


def test_every_link_of_the_readme_and_the_docs_points_somewhere():
    problems = broken_links(SOURCE_DIR)
    assert problems == [], "broken links:\n" + "\n".join(problems)


@pytest.mark.parametrize("heading, anchor", [
    ("Finding a straggler: `livemonctl ranks`", "finding-a-straggler-livemonctl-ranks"),
    ("What each machine is doing: `system.*` Stats", "what-each-machine-is-doing-system-stats"),
    ("Ranks and `LIVEMON_CONNECT`", "ranks-and-livemon_connect"),
    ("(d) The history for late subscribers: memory, and the logging thread's cost",
     "d-the-history-for-late-subscribers-memory-and-the-logging-threads-cost"),
    ("No code changes: PyTorch's own operators and steps, live", "no-code-changes-pytorchs-own-operators-and-steps-live"),
    ("A [linked](other.md) heading", "a-linked-heading"),
    ("Spaces - and dashes", "spaces---and-dashes"),
])
def test_anchors_follow_githubs_rules(heading, anchor):
    assert github_anchor(heading) == anchor


def write(root, path, text):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w", encoding="utf-8") as f:
        f.write(text)


def test_the_checker_reports_missing_files_anchors_and_escapes(tmp_path):
    root = str(tmp_path)
    write(root, "README.md", "# Top\n\n[guide](docs/guide.md#setup), [gone](docs/gone.md), [up](../outside.md)\n"
                             "[self](#top) [nowhere](#nowhere) ![shot](docs/shot.png)\n"
                             "`[in code](docs/gone.md)`\n\n```\n[in a block](docs/gone.md)\n```\n")
    write(root, "docs/guide.md", "# Guide\n\n## Setup\n\n## Setup\n\n[twice](#setup-1) [thrice](#setup-2)\n"
                                 "[back](../README.md#top) [site](https://example.org/x#y)\n")
    write(root, "docs/shot.png", "")
    problems = broken_links(root, ["README.md", "docs/guide.md"])
    assert problems == [
        "README.md:3: docs/gone.md: no such file",
        "README.md:3: ../outside.md: points outside the repository",
        "README.md:4: #nowhere: README.md has no heading with the anchor #nowhere",
        "docs/guide.md:7: #setup-2: docs/guide.md has no heading with the anchor #setup-2",
    ]
