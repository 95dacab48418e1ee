# Prometheus from Debian's package, scraping the workers and Flower (docker/prometheus.yml).
ARG BASE_IMAGE=proofq-base:bookworm
FROM ${BASE_IMAGE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends prometheus \
 && rm -rf /var/lib/apt/lists/*
COPY prometheus.yml /etc/prometheus/prometheus.yml
USER prometheus
EXPOSE 9090
CMD ["prometheus", "--config.file=/etc/prometheus/prometheus.yml", \
     "--storage.tsdb.path=/var/lib/prometheus/metrics2"]
