"""examples/pytorch_train.py as a module, for the benchmarks that time its training loop."""

import importlib.util
import os

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "pytorch_train.py")


def load_example():
    spec = importlib.util.spec_from_file_location("pytorch_train", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
