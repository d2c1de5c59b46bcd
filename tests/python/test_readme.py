"""The README's Python example runs and prints what its comments say."""

import os
import re

from conftest import SOURCE_DIR, run_python


def test_the_readme_python_example():
    with open(os.path.join(SOURCE_DIR, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    block = re.search(r"<!-- readme-python:begin -->\n```python\n(.*?)```\n<!-- readme-python:end -->", readme, re.S)
    assert block, "the README has no readme-python block"
    code = block.group(1)
    expected = [line.split("#", 1)[1].strip() for line in code.splitlines() if line.startswith("print(")]
    result = run_python(code)
    assert result.stdout.splitlines() == expected
