#!/bin/sh
# The wheels bench/device.sh installs on the device machine (CPython 3.12, no package index
# there): proofq's dependencies from pyproject.toml, built for manylinux x86_64, in .whl/
# (git-ignored; carry it: run(carry=[".whl"])). numpy is left out: the device's own is the
# one its CuPy was built against.
#
#   bench/device_wheels.sh
set -eu
cd "$(dirname "$0")/.."
mkdir -p .whl
python3 -c 'import tomllib
deps = tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]
print("\n".join(d for d in deps if not d.startswith("numpy")))' |
    xargs python3 -m pip download --quiet --dest .whl --only-binary=:all: \
        --python-version 3.12 --platform manylinux2014_x86_64 \
        --platform manylinux_2_17_x86_64 --platform any
ls .whl | grep -c '\.whl$' | sed 's/$/ wheels in .whl/' >&2
