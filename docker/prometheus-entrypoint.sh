#!/bin/sh
# Prometheus's start in the compose deployment (docker/prometheus.yml).  Prometheus does not
# expand environment variables in its config, so Flower's login, FLOWER_BASIC_AUTH
# (user:password, the variable Flower itself reads; the first login where it lists several),
# is written here at each start into a private copy of the config and a password file, never
# into the image.  Then Prometheus replaces this shell, given this copy and the arguments.
set -eu

template=${PROMETHEUS_CONFIG_TEMPLATE:-/etc/prometheus/prometheus.yml}
run_dir=${PROMETHEUS_RUN_DIR:-/run/prometheus}

refuse() {
    echo "prometheus: FLOWER_BASIC_AUTH $1" >&2
    exit 2
}

login=${FLOWER_BASIC_AUTH:-}
[ -n "$login" ] || refuse "is not set: user:password, Flower's login (compose passes Flower's)"
case $login in
    *'
'*) refuse "holds a line break: expected user:password" ;;
esac
login=${login%%,*}
case $login in
    *:*) ;;
    *) refuse "has no ':' in its first login: expected user:password" ;;
esac
user=${login%%:*}
password=${login#*:}
[ -n "$user" ] || refuse "has an empty user: expected user:password"
[ -n "$password" ] || refuse "has an empty password: expected user:password"
case $password in
    [[:space:]]*|*[[:space:]])
        refuse "password begins or ends with a space, which Prometheus drops from its file" ;;
esac

umask 077
mkdir -p "$run_dir"
printf '%s' "$password" >"$run_dir/flower-password"
# the user as the YAML single-quoted scalar of the placeholder: a quote is doubled
FLOWER_USER_YAML=$(printf '%s' "$user" | sed "s/'/''/g") awk '
    { at = index($0, "@FLOWER_USER@") }
    at { $0 = substr($0, 1, at - 1) ENVIRON["FLOWER_USER_YAML"] substr($0, at + 13); n++ }
    { print }
    END { if (n != 1) { print "prometheus: " FILENAME ": expected one @FLOWER_USER@" > "/dev/stderr"; exit 1 } }
' "$template" >"$run_dir/prometheus.yml"
exec prometheus --config.file="$run_dir/prometheus.yml" "$@"
