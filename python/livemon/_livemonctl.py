"""The console script `livemonctl` of the wheel: runs the livemonctl program shipped inside the
package (livemon/_bin/livemonctl), with the same arguments, exit status and signals, by replacing
this Python process with it."""

import os
import sys


def program_path():
    """Where the wheel put the livemonctl program (it is not there in a build tree)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "livemonctl")


def main():
    program = program_path()
    if not os.access(program, os.X_OK):
        sys.stderr.write(f"livemonctl: the program is missing from this installation of livemon ({program}); "
                         "reinstall the wheel (pip install --force-reinstall livemon)\n")
        return 1
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(program, ["livemonctl", *sys.argv[1:]])
    return 1  # not reached: execv either replaces the process or raises OSError


if __name__ == "__main__":
    sys.exit(main())
