#!/usr/bin/env bash
# Render nginx.conf.template into WORKDIR and run nginx in the foreground.
#
#   tests/interop/nginx/run.sh [--config-only] PORT_A PORT_B LISTEN_PORT WORKDIR
#
# Without --config-only the script execs nginx (same PID as this script), so the
# caller owns the proxy process: SIGTERM (or SIGKILL) stops it. With
# --config-only it writes WORKDIR/nginx.conf, checks it with `nginx -t`, and
# prints the command line that runs it. NGINX_BIN selects the binary (default:
# the one scripts/setup-nginx.sh finds or installs). Not "NGINX": nginx itself
# reads that variable (inherited listen sockets) and logs an [emerg] about it.
# AFFINITY=session routes every request naming an Mcp-Session-Id to the replica
# that holds that session, read from the id itself: replica A must start its ids
# with "a." and B with "b." (HttpOptions::session_id_prefix; the notes example's
# MCP_RESOLVE_SESSION_PREFIX). A request without one (`initialize`, 2026-07-28
# traffic) goes round-robin.
set -euo pipefail

CONFIG_ONLY=0
if [[ "${1:-}" == "--config-only" ]]; then
    CONFIG_ONLY=1
    shift
fi
if [[ $# -ne 4 ]]; then
    echo "usage: $0 [--config-only] PORT_A PORT_B LISTEN_PORT WORKDIR" >&2
    exit 2
fi
PORT_A="$1" PORT_B="$2" LISTEN_PORT="$3"
for p in "${PORT_A}" "${PORT_B}" "${LISTEN_PORT}"; do
    [[ "${p}" =~ ^[0-9]+$ ]] || { echo "run.sh: bad port '${p}'" >&2; exit 2; }
done

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$4"
WORKDIR="$(cd "$4" && pwd)"
case "${WORKDIR}" in *[[:space:]\;\'\"@]*)
    echo "run.sh: WORKDIR must not contain spaces, quotes, ';' or '@'" >&2; exit 2 ;;
esac

NGINX_BIN="${NGINX_BIN:-}"
if [[ -z "${NGINX_BIN}" ]]; then
    NGINX_BIN="$("${HERE}/../../../scripts/setup-nginx.sh" | tail -n1)"
fi
unset NGINX

mkdir -p "${WORKDIR}/tmp"
map_line="" upstream="mcp_replicas"
if [[ "${AFFINITY:-}" == session ]]; then
    # Backslashes doubled for sed: the config gets `~^a\.` (a literal dot).
    map_line='map $http_mcp_session_id $mcp_upstream { ~^a\\. 127.0.0.1:'"${PORT_A}"'; ~^b\\. 127.0.0.1:'"${PORT_B}"'; default mcp_replicas; }'
    upstream='$mcp_upstream'
fi
sed -e "s|# @AFFINITY_MAP@|${map_line}|" \
    -e "s|@UPSTREAM@|${upstream}|" \
    -e "s|@WORKDIR@|${WORKDIR}|g" \
    -e "s|@PORT_A@|${PORT_A}|g" \
    -e "s|@PORT_B@|${PORT_B}|g" \
    -e "s|@LISTEN_PORT@|${LISTEN_PORT}|g" \
    "${HERE}/nginx.conf.template" > "${WORKDIR}/nginx.conf"

# -p: prefix for any relative path; -e: error log used before the config is
# read (the compiled-in /var/log/nginx/error.log is not writable for non-root).
CMD=("${NGINX_BIN}" -p "${WORKDIR}" -e "${WORKDIR}/error.log" -c "${WORKDIR}/nginx.conf")

if [[ "${CONFIG_ONLY}" -eq 1 ]]; then
    "${CMD[@]}" -t -q
    printf '%q ' "${CMD[@]}"
    echo
    exit 0
fi
exec "${CMD[@]}"
