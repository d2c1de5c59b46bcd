"""Every C++ and Python code block of README.md and docs/*.md is a marked example (so the tests
compile or run it), and every marker is well-formed."""

from docs_markdown import EXAMPLE_LANGUAGES, SOURCE_DIR, documentation_files, examples, parse_marker, read_document


def test_every_cpp_and_python_block_is_a_marked_example():
    unmarked = [f"{block.path}:{block.line}: a ```{block.language} block without an <!-- example: ... --> line before it"
                for path in documentation_files(SOURCE_DIR) for block in read_document(path, SOURCE_DIR).blocks
                if block.language in EXAMPLE_LANGUAGES and block.marker is None]
    assert unmarked == [], "\n".join(unmarked)


def test_every_marker_is_well_formed_and_matches_its_block():
    problems = []
    for path in documentation_files(SOURCE_DIR):
        for block in read_document(path, SOURCE_DIR).blocks:
            if block.marker is None or block.language not in EXAMPLE_LANGUAGES:
                continue
            try:
                language, _, attributes = parse_marker(block.marker)
            except ValueError as error:
                problems.append(f"{path}:{block.line}: {error}")
                continue
            if language != block.language:
                problems.append(f"{path}:{block.line}: the marker says {language}, the block is {block.language}")
            if "output" in attributes and language != "cpp":
                problems.append(f"{path}:{block.line}: output= is for C++ examples; Python ones say it with print(...)  # TEXT")
            if "requires" in attributes and language != "python":
                problems.append(f"{path}:{block.line}: requires= is for Python examples")
    assert problems == [], "\n".join(problems)


def test_the_readme_has_a_cpp_and_a_python_example_that_run():
    readme = [(example.language, example.mode) for example in examples(SOURCE_DIR) if example.path == "README.md"]
    assert ("cpp", "run") in readme and ("python", "run") in readme
