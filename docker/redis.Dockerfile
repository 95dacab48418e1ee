# Redis from Debian's package, on the same base as proofq's image (no registry of images).
ARG BASE_IMAGE=proofq-base:bookworm
FROM ${BASE_IMAGE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends redis-server redis-tools \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /data && chown redis:redis /data
WORKDIR /data
USER redis
CMD ["redis-server", "--appendonly", "yes", "--dir", "/data"]
