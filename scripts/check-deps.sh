#!/usr/bin/env bash
# The core crates take no dependency of the web-stack and observability features unless asked:
# with default features, `cargo tree` of `mcp-resolve` and `mcp-resolve-runtime` (normal
# dependencies) names none of the crates behind `tower` and `metrics`, nor any exporter or web
# framework the examples use. CI runs it (.ci/run); it fails naming each crate found.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

forbidden='^(axum|axum-core|tower|tower-http|tower-service|tower-layer|metrics|metrics-util|metrics-exporter-prometheus|opentelemetry|opentelemetry_sdk|opentelemetry-otlp|opentelemetry-http|tracing-opentelemetry|prost|tonic|reqwest)$'
status=0
for crate in mcp-resolve mcp-resolve-runtime mcp-resolve-macros; do
    found="$(cargo tree -q -p "$crate" -e normal --prefix none --format '{p}' | awk '{print $1}' | sort -u | grep -E "$forbidden" || true)"
    if [[ -n "$found" ]]; then
        echo "check-deps: $crate with default features depends on: $(echo "$found" | tr '\n' ' ')" >&2
        status=1
    fi
done
# With `tower` and `metrics`, the facades alone: the trait crate and the metrics facade.
found="$(cargo tree -q -p mcp-resolve-runtime -e normal --features tower,metrics --prefix none --format '{p}' | awk '{print $1}' | sort -u | grep -E "$forbidden" | grep -vxE 'tower-service|metrics' || true)"
if [[ -n "$found" ]]; then
    echo "check-deps: mcp-resolve-runtime with tower,metrics depends on: $(echo "$found" | tr '\n' ' ')" >&2
    status=1
fi
[[ $status -eq 0 ]] && echo "check-deps: the core crates' default dependencies name no web framework, exporter or metrics crate"
exit $status
