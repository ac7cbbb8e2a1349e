#!/usr/bin/env bash
# Connections per second on loopback against peers that no one here wrote, in one run:
#   1. openssl s_time -new and tlsbench load (OpenSSL client, 1 connection at a time) against
#      one tlsbench serve --stack openssl (TLS 1.3, X25519, ECDSA P-256, AES-128-GCM);
#   2. s_time -reuse and tlsbench load with the resume-ticket scenario, against another;
#   3. nginx and tlsbench serve --stack openssl, with as many workers, under the same tlsbench
#      load.
# Each pair of figures comes from runs that take turns, ROUNDS of SECONDS each, so that what
# else the machine does weighs on both alike.
# Usage: scripts/peers.sh [SECONDS, default 5] [ROUNDS, default 2] [WORKERS, default 1]
# Needs a release build (cargo build --release --workspace) and scripts/setup.sh's packages.
#
# How the two clients compare:
# - Both send `GET / HTTP/1.0` and read the response up to the server's close_notify (s_time
#   with -www /; without it s_time sends no request and reads nothing). Then tlsbench sends its
#   close_notify and closes; s_time sends none and resets the connection (SO_LINGER 0).
# - Both verify the server's chain with tlsbench's CA: s_time because OpenSSL's client checks
#   the chain even with SSL_VERIFY_NONE, though s_time ignores the result (its -verify only
#   sets a depth) and checks no name; tlsbench checks the name too, and fails on an error.
# - s_time counts whole seconds ("N connections in S real seconds", S rounded up): its rate
#   here is N over the wall time of the whole command.
# - s_time -reuse keeps one SSL object and resumes its latest session: in TLS 1.3, the one of
#   the ticket the server sent on the previous connection (read with the response). tlsbench's
#   resume-ticket scenario does the same: one ticket per handshake, each resumed once.
# - tlsbench load runs one connection at a time here, as s_time does.
set -euo pipefail

duration=${1:-5}
rounds=${2:-2}
workers=${3:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
tlsbench=$root/target/release/tlsbench
[ -x "$tlsbench" ] || { echo "build first: cargo build --release --workspace" >&2; exit 1; }
nginx=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx" ] || { echo "nginx is not installed: run scripts/setup.sh" >&2; exit 1; }
command -v openssl >/dev/null || { echo "openssl is not installed: run scripts/setup.sh" >&2; exit 1; }

full=handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm
resume=handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm
work=$(mktemp -d)
export TLSBENCH_DATA_DIR=$work/data
pids=()
cleanup() {
    local pid
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# Waits (at most 10 s) until $1 has a first line.
wait_for_line() {
    local i
    for i in $(seq 100); do
        [ -s "$1" ] && return 0
        sleep 0.1
    done
    echo "nothing in $1 after 10 s" >&2
    exit 1
}

# tlsbench serve in the background: sets server_pid and server_addr; its report goes to
# $work/NAME.out when it stops (its figures include the connections of every client).
start_server() { # NAME SCENARIO
    "$tlsbench" serve --stack openssl --scenario "$2" --workers "$workers" >"$work/$1.out" 2>"$work/$1.err" &
    server_pid=$!
    pids+=("$server_pid")
    wait_for_line "$work/$1.out"
    server_addr=$(head -1 "$work/$1.out")
}

stop_server() { # NAME
    kill -TERM "$server_pid"
    wait "$server_pid" || { echo "the server $1 reported failures:" >&2; cat "$work/$1.out" >&2; }
}

# tlsbench load with the OpenSSL client, one connection at a time, for $duration seconds:
# appends "CONNECTIONS SECONDS" (its own count and window, without its warm-up connection) to
# $work/NAME.runs.
load() { # NAME SCENARIO ADDR
    "$tlsbench" load --stack openssl --scenario "$2" --connect "$3" --duration "$duration" --concurrency 1 \
        >"$work/$1.out" 2>&1 ||
        { echo "tlsbench load $1 failed:" >&2; cat "$work/$1.out" >&2; exit 1; }
    sed -nE 's/^connections +([0-9,]+) .* in ([0-9.]+) s: .*/\1 \2/p' "$work/$1.out" | tr -d , >>"$work/$1.runs"
}

# openssl s_time for $duration seconds: appends "CONNECTIONS SECONDS" to $work/NAME.runs, the
# seconds of wall time of the whole command (s_time's own are whole seconds).
s_time() { # NAME ADDR ARGS...
    local name=$1 addr=$2 start end
    shift 2
    start=$(date +%s.%N)
    openssl s_time -connect "$addr" -time "$duration" -tls1_3 -ciphersuites TLS_AES_128_GCM_SHA256 \
        -CAfile "$ca" -verify 3 "$@" >"$work/$name.out" 2>&1 ||
        { echo "s_time $name failed:" >&2; cat "$work/$name.out" >&2; exit 1; }
    end=$(date +%s.%N)
    awk -v a="$start" -v b="$end" '/real seconds/ { print $1, b - a }' "$work/$name.out" >>"$work/$name.runs"
}

# Connections per second over all the runs of NAME.
rate() { awk '{ n += $1; s += $2 } END { printf "%.1f", n / s }' "$work/$1.runs"; }
connections() { awk '{ n += $1 } END { print n }' "$work/$1.runs"; }
# Each run's connections per second, to show the spread.
each() { awk '{ printf "%s%.0f", (NR > 1 ? ", " : ""), $1 / $2 }' "$work/$1.runs"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", (b / a - 1) * 100 }'; }
# The server's CPU µs per connection (user + system) from its report.
server_cpu() {
    sed -nE 's/^CPU per connection +user ([0-9,.]+) µs, system ([0-9,.]+) µs$/\1 \2/p' "$1" | tr -d , |
        awk '{ printf "%.0f", $1 + $2 }'
}
served() { sed -nE 's/^connections +(.*) in .*/\1/p' "$1" | sed 's/,$//'; }

echo "$rounds round(s) of $duration s per figure, servers with $workers worker(s), loopback; $(openssl version)" >&2

# 1. New connections: s_time and tlsbench load in turn, against one server.
start_server serve-new "$full"
pki=$TLSBENCH_DATA_DIR/pki-v2/ecdsa-p256
ca=$pki/ca.pem
# The chain that s_time is given verifies, name included: s_time itself would not say.
openssl verify -CAfile "$ca" -untrusted "$pki/chain.pem" -verify_hostname server.tlsbench.test \
    "$pki/chain.pem" >/dev/null
for round in $(seq "$rounds"); do
    echo "round $round: s_time -new -www /, tlsbench load" >&2
    s_time st-new "$server_addr" -new -www /
    load tb-new "$full" "$server_addr"
done
stop_server serve-new

# 2. Resumed connections, against a server of the resume-ticket scenario.
start_server serve-resume "$resume"
for round in $(seq "$rounds"); do
    echo "round $round: s_time -reuse -www /, tlsbench load (resumed)" >&2
    s_time st-reuse "$server_addr" -reuse -www /
    load tb-reuse "$resume" "$server_addr"
done
stop_server serve-resume

# 3. nginx and tlsbench's OpenSSL server side by side, loaded in turn by the same client.
ngx=$work/nginx
mkdir -p "$ngx"
# A port nginx can bind: it exits at once when another program has it.
for attempt in 1 2 3 4 5; do
    port=$((20000 + RANDOM % 40000))
    sed -e "s|@DIR@|$ngx|g; s|@WORKERS@|$workers|; s|@PORT@|$port|" \
        -e "s|@CHAIN@|$pki/chain.pem|; s|@KEY@|$pki/server.key|" \
        -e "s|@GROUP@|X25519|; s|@SUITE@|TLS_AES_128_GCM_SHA256|; s|@TICKETS@|off|; s|@NUM_TICKETS@|0|" \
        "$root/scripts/nginx.conf" >"$ngx/nginx.conf"
    "$nginx" -p "$ngx" -c "$ngx/nginx.conf" -e "$ngx/error.log" &
    nginx_pid=$!
    for i in $(seq 100); do
        { [ -s "$ngx/nginx.pid" ] || ! kill -0 "$nginx_pid" 2>/dev/null; } && break
        sleep 0.1
    done
    [ -s "$ngx/nginx.pid" ] && kill -0 "$nginx_pid" 2>/dev/null && break
    wait "$nginx_pid" || true
    [ "$attempt" = 5 ] && { echo "nginx did not start:" >&2; cat "$ngx/error.log" >&2; exit 1; }
done
pids+=("$nginx_pid")
# nginx's workers' CPU time so far, in clock ticks.
ticks() {
    local w t=0
    for w in $(pgrep -P "$nginx_pid"); do t=$((t + $(awk '{ print $14 + $15 }' "/proc/$w/stat"))); done
    echo "$t"
}
start_server serve-openssl "$full"
nginx_ticks=0
for round in $(seq "$rounds"); do
    echo "round $round: tlsbench load against nginx, then against tlsbench serve --stack openssl" >&2
    before=$(ticks)
    load tb-nginx "$full" "127.0.0.1:$port"
    nginx_ticks=$((nginx_ticks + $(ticks) - before))
    load tb-openssl "$full" "$server_addr"
done
stop_server serve-openssl
nginx_requests=$(wc -l <"$ngx/access.log")
nginx_cpu=$(awk -v t="$nginx_ticks" -v hz="$(getconf CLK_TCK)" -v n="$nginx_requests" \
    'BEGIN { printf "%.0f", t / hz * 1e6 / n }')
kill -TERM "$nginx_pid"
wait "$nginx_pid" || true

st_new=$(rate st-new) tb_new=$(rate tb-new) st_reuse=$(rate st-reuse) tb_reuse=$(rate tb-reuse)
tb_nginx=$(rate tb-nginx) tb_openssl=$(rate tb-openssl)
echo
echo "| client | server | connections | per second | each round | |"
echo "| --- | --- | ---: | ---: | --- | --- |"
echo "| openssl s_time -new -www / | tlsbench serve openssl | $(connections st-new) | $st_new | $(each st-new) | |"
# (echo joins its arguments with a space: each row is one line, cut where a space falls.)
echo "| tlsbench load openssl, handshake-full | same | $(connections tb-new) | $tb_new | $(each tb-new) |" \
    "$(ratio "$st_new" "$tb_new") vs s_time |"
echo "| openssl s_time -reuse -www / | tlsbench serve openssl, resume-ticket |" \
    "$(connections st-reuse) | $st_reuse | $(each st-reuse) | |"
echo "| tlsbench load openssl, handshake-resume-ticket | same |" \
    "$(connections tb-reuse) | $tb_reuse | $(each tb-reuse) | $(ratio "$st_reuse" "$tb_reuse") vs s_time |"
echo "| tlsbench load openssl, handshake-full | nginx $("$nginx" -v 2>&1 | cut -d/ -f2), $workers worker(s) |" \
    "$(connections tb-nginx) | $tb_nginx | $(each tb-nginx) | server CPU $nginx_cpu µs per connection |"
echo "| tlsbench load openssl, handshake-full | tlsbench serve openssl, $workers worker(s) |" \
    "$(connections tb-openssl) | $tb_openssl | $(each tb-openssl) |" \
    "server CPU $(server_cpu "$work/serve-openssl.out") µs per connection;" \
    "$(ratio "$tb_nginx" "$tb_openssl") vs nginx |"
echo
echo "Scenarios: TLS 1.3, X25519, ECDSA P-256, AES-128-GCM. The servers' own counts (all clients, warm-ups"
echo "included): new $(served "$work/serve-new.out"); resumed $(served "$work/serve-resume.out");"
echo "tlsbench serve openssl $(served "$work/serve-openssl.out"); nginx $nginx_requests requests."
