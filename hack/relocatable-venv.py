"""Makes a virtualenv run wherever it is mounted.

pip writes each console script with the absolute path of the venv's python
in its first line. This replaces that line with a /bin/sh preamble that execs
the python of the script's own directory; Python reads the preamble as a
string literal (the form pip itself uses for paths a shebang cannot hold).

bin/activate names the venv's directory too: it is made to compute it from
its own location. Ray's pip runtime environments clone the venv and then
source the clone's activate, which must lead to the clone.
"""

import os
import re
import sys

PREAMBLE = (
    "#!/bin/sh\n"
    "'''exec' \"$(dirname -- \"$(realpath -- \"$0\")\")/python\" \"$0\" \"$@\"\n"
    "' '''\n"
)


ACTIVATE_DIR = 'VIRTUAL_ENV="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)"'


def relocate_activate(venv):
    path = os.path.join(venv, "bin", "activate")
    with open(path) as f:
        text = f.read()
    text, n = re.subn(r"^VIRTUAL_ENV=.*$", lambda _: ACTIVATE_DIR, text, flags=re.M)
    if n != 1:
        sys.exit(f"{path}: expected one VIRTUAL_ENV= line, found {n}")
    with open(path, "w") as f:
        f.write(text)


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
    relocate_activate(sys.argv[1])
