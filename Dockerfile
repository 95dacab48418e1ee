# proofq worker / Flower image: CUDA runtime (with NVRTC, which CuPy's RawModule compiles
# kernels with) + Python 3.12 + g++ (snark.native: key setup's QAP, batch Poseidon, the CPU
# backend, compiled on first use) + proofq installed as a package with the GPU extra.
FROM nvidia/cuda:12.6.3-runtime-ubuntu24.04

ENV DEBIAN_FRONTEND=noninteractive \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PATH=/opt/proofq/bin:$PATH \
    PROOFQ_PARAMS_DIR=/var/lib/proofq/params

RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv g++ \
 && rm -rf /var/lib/apt/lists/* \
 && python3 -m venv /opt/proofq

WORKDIR /src
COPY pyproject.toml README.md ./
COPY config config
COPY snark snark
COPY gpu gpu
COPY workers workers
COPY tasks tasks
COPY client client
RUN pip install ".[gpu]" \
 && useradd --system --create-home proofq \
 && mkdir -p /var/lib/proofq/params \
 && chown -R proofq /var/lib/proofq

# Run from outside the source tree: `celery -A tasks` imports the installed package.
WORKDIR /home/proofq
USER proofq
CMD ["celery", "-A", "tasks", "worker", "--gpu", "0", "-l", "INFO"]
