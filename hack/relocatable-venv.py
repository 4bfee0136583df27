"""Makes a virtualenv's console scripts find their interpreter next to
themselves, so the venv runs wherever it is mounted.

pip writes each script with the absolute path of the venv's python in its
first line. This replaces that line with a /bin/sh preamble that execs the
python of the script's own directory; Python reads the preamble as a string
literal (the form pip itself uses for paths a shebang cannot hold).
"""

import os
import sys

PREAMBLE = (
    "#!/bin/sh\n"
    "'''exec' \"$(dirname -- \"$(realpath -- \"$0\")\")/python\" \"$0\" \"$@\"\n"
    "' '''\n"
)


def relocate(venv):
    bin_dir = os.path.join(venv, "bin")
    shebangs = {"#!" + os.path.join(bin_dir, name) for name in ("python", "python3")}
    changed = 0
    for name in sorted(os.listdir(bin_dir)):
        path = os.path.join(bin_dir, name)
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            first = f.readline()
            rest = f.read()
        if first.decode(errors="replace").rstrip("\n") not in shebangs:
            continue
        with open(path, "wb") as f:
            f.write(PREAMBLE.encode() + rest)
        changed += 1
    print(f"{changed} scripts in {bin_dir} made relocatable")
    return changed


if __name__ == "__main__":
    if relocate(sys.argv[1]) == 0:
        sys.exit("no script was made relocatable")
