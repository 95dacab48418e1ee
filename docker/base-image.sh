#!/bin/sh
# The base image of proofq's images, made from Debian's packages alone (no registry of
# images needed): a minimal Debian with Python 3, venv and g++, imported as IMAGE.
#
#   sudo docker/base-image.sh [IMAGE] [MIRROR]     (default proofq-base:bookworm)
#
# Needs debootstrap (apt-get install debootstrap) and root; about a minute and 600 MB.
set -eu
image=${1:-proofq-base:bookworm}
mirror=${2:-http://deb.debian.org/debian}
root=$(mktemp -d "${TMPDIR:-/tmp}/proofq-base.XXXXXX")
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase --include=python3,python3-venv,g++,ca-certificates \
    bookworm "$root" "$mirror" >&2
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/archives/*.deb
tar -C "$root" -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["/bin/bash"]' - "$image"
