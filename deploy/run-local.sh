#!/usr/bin/env bash
# Starts N replicas of a built suite server behind haproxy on this machine, sharing Redis and one
# requestState key:   deploy/run-local.sh sqlite 3 8080 -- --allow-write /path/to/app.db
# The replicas listen on 127.0.0.1:18000.. and the load balancer on 127.0.0.1:PORT (/mcp); with METRICS=1
# each replica also serves Prometheus /metrics on 127.0.0.1:19000+N (--metrics-port).
# Needs: haproxy (apt-get install haproxy), Redis (MCP_REDIS_URL, default redis://127.0.0.1:6379).
set -euo pipefail
server=${1:?server name, e.g. sqlite}; count=${2:-2}; port=${3:-8080}; shift 3 || true
[ "${1:-}" = "--" ] && shift
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/servers/$server/dist/index.js"
[ -f "$bin" ] || { echo "build first: npx -y pnpm@10 build"; exit 2; }
command -v haproxy >/dev/null || { echo "haproxy is not installed (apt-get install haproxy)"; exit 2; }
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
head -c 48 /dev/urandom | base64 >"$work/state.key"
servers=""
for i in $(seq 1 "$count"); do
  p=$((18000 + i))
  metrics=()
  [ "${METRICS:-}" = 1 ] && metrics=(--metrics-port $((19000 + i)))
  MCP_REDIS_URL=${MCP_REDIS_URL:-redis://127.0.0.1:6379} node "$bin" "$@" --http --port "$p" "${metrics[@]}" \
    --request-state-key-file "$work/state.key" --redis-prefix "suite:$server:" --allowed-host "127.0.0.1:$port" &
  servers+="    server r$i 127.0.0.1:$p check"$'\n'
done
PORT=$port SERVERS=$servers envsubst '${PORT} ${SERVERS}' <"$root/deploy/haproxy.cfg.template" >"$work/haproxy.cfg"
echo "MCP endpoint: http://127.0.0.1:$port/mcp (haproxy stats: /haproxy-stats)"
haproxy -f "$work/haproxy.cfg" -db
