# Prometheus from Debian's package, scraping the workers and Flower (docker/prometheus.yml).
# Flower's login is no part of the image: docker/prometheus-entrypoint.sh writes it at each
# start from FLOWER_BASIC_AUTH, into /run/prometheus (a tmpfs in docker-compose.yml).
ARG BASE_IMAGE=proofq-base:bookworm
FROM ${BASE_IMAGE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends prometheus \
 && rm -rf /var/lib/apt/lists/*
COPY prometheus.yml /etc/prometheus/prometheus.yml
COPY prometheus-entrypoint.sh /usr/local/bin/prometheus-entrypoint
RUN chmod 0755 /usr/local/bin/prometheus-entrypoint \
 && install -d -o prometheus -g prometheus -m 0700 /run/prometheus
USER prometheus
EXPOSE 9090
ENTRYPOINT ["/usr/local/bin/prometheus-entrypoint"]
CMD ["--storage.tsdb.path=/var/lib/prometheus/metrics2"]
