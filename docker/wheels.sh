#!/bin/sh
# proofq and every Python package it needs as wheels in docker/wheels/, made with this
# host's pip, so that building the image needs no package index (PROOFQ_PIP_OFFLINE=1):
# for hosts whose containers cannot reach one.  The wheels must suit the base image's
# Python (proofq-base:bookworm: CPython 3.11); run it with a Python 3.11.
#
#   docker/wheels.sh [EXTRAS]        (e.g. gpu)
set -eu
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
rm -f docker/wheels/*.whl
# async-timeout: redis-py needs it below Python 3.11.3 (Debian 12 has 3.11.2), which a
# newer Python's pip leaves out.
"$python" -m pip wheel --quiet --wheel-dir docker/wheels ".${1:+[$1]}" setuptools wheel \
    "async-timeout>=4.0.3"
ls docker/wheels | grep -c '\.whl$' | sed 's/$/ wheels in docker\/wheels/' >&2
