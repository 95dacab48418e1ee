# proofq's image: workers, Flower and the intake.  Python 3 + g++ (snark.native: key setup's
# QAP, batch Poseidon, the CPU backend, compiled on first use) + proofq installed as a
# package, with EXTRAS (gpu: CuPy).
#
# BASE_IMAGE needs python3, python3-venv and g++ or apt-get to install them:
#   proofq-base:bookworm                      made from Debian's packages by docker/base-image.sh
#                                             (no registry of images needed; CPU workers)
#   nvidia/cuda:12.6.3-runtime-ubuntu24.04    GPU workers (CUDA runtime with NVRTC, which
#                                             CuPy's RawModule compiles kernels with)
# PIP_OFFLINE=1 installs from docker/wheels/ alone (docker/wheels.sh makes them), for hosts
# whose containers reach no package index.
ARG BASE_IMAGE=proofq-base:bookworm
FROM ${BASE_IMAGE}
ARG EXTRAS=""
ARG PIP_OFFLINE=""

ENV DEBIAN_FRONTEND=noninteractive \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PATH=/opt/proofq/bin:$PATH \
    PROOFQ_PARAMS_DIR=/var/lib/proofq/params \
    PROOFQ_FILECOIN_PARAMS_DIR=/var/lib/proofq/filecoin-params \
    PROOFQ_NATIVE_CACHE=/var/lib/proofq/native

RUN if ! command -v g++ >/dev/null || ! python3 -c "import ensurepip" 2>/dev/null; then \
        apt-get update \
        && apt-get install -y --no-install-recommends python3 python3-venv g++ \
        && rm -rf /var/lib/apt/lists/*; \
    fi \
 && python3 -m venv /opt/proofq

WORKDIR /src
COPY docker/wheels /tmp/wheels
COPY pyproject.toml README.md ./
COPY config config
COPY snark snark
COPY gpu gpu
COPY workers workers
COPY tasks tasks
COPY client client
RUN pip install ${PIP_OFFLINE:+--no-index} --find-links /tmp/wheels ".${EXTRAS:+[$EXTRAS]}" \
 && rm -rf /tmp/wheels \
 && useradd --system --create-home proofq \
 && mkdir -p /var/lib/proofq/params /var/lib/proofq/witnesses \
             /var/lib/proofq/filecoin-params /var/lib/proofq/native /var/lib/proofq/import \
 && chown -R proofq /var/lib/proofq

# Run from outside the source tree: `celery -A tasks` imports the installed package.
WORKDIR /home/proofq
USER proofq
CMD ["celery", "-A", "tasks", "worker", "-n", "cpu@%h"]
