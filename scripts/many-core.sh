#!/usr/bin/env bash
# The many-core picture in one command (docs/axes.md#on-a-machine-with-many-cores): how each stack
# whose runner takes threads scales on this machine's cores. Two runs, stored in one database:
#  1. in memory: full TLS 1.3 handshakes and TLS 1.3 ticket resumption (ECDSA P-256), 1, 2, 4 ...
#     threads up to the CPUs tlsbench may use, each thread pinned to a core of its own, with own
#     and with shared contexts; locks and atomics per handshake (the sync measure) beside them;
#  2. over TCP: each server's peak on cores of its own (`--peak`: a quarter of the CPUs, the load
#     generators on the rest), with 1, 2, 4 ... workers up to its cores, full and resumed.
# It prints the machine first (model, CPUs), then each run's tables; the thread run names the
# cores whose speed differs. Extra arguments go to both runs (e.g. --stack openssl --stack
# boringssl to measure fewer stacks, or --db FILE). `taskset -c 0-15 scripts/many-core.sh` keeps it
# to those CPUs. Run scripts/build.sh first (scripts/setup.sh on a fresh machine); openssl@3.5
# and openssl@1.1.1 take part when built (scripts/build-openssl.sh 3.5, 1.1.1).
set -euo pipefail
cd "$(dirname "$0")/.."
tlsbench=target/release/tlsbench
if [ ! -x "$tlsbench" ]; then
    echo "many-core.sh: $tlsbench is not built: run scripts/build.sh first" >&2
    exit 1
fi

# The CPUs this process may use (taskset or a container's cpuset), as tlsbench counts them.
cpus=$(nproc)
# 1, 2, 4 ... up to the CPUs, and the CPUs themselves when not a power of two.
powers_up_to() {
    local n=$1 k=2 list=""
    while ((k <= n)); do list+="${list:+,}$k"; k=$((k * 2)); done
    if ((n > 1 && (n & (n - 1)) != 0)); then list+="${list:+,}$n"; fi
    echo "$list"
}
threads=$(powers_up_to "$cpus")
# The server's share of the CPUs in the peak run, as tlsbench's --peak takes it by default.
server_cpus=$(((cpus + 3) / 4))
workers=$(powers_up_to "$server_cpus")

# The stacks whose runners take threads, unless the arguments name stacks.
stacks=()
if ! printf '%s\n' "$@" | grep -q -- '^--stack'; then
    stacks=(--stack openssl --stack boringssl --stack aws-lc --stack rustls-aws-lc-rs --stack s2n-tls
        --stack gnutls)
    for release in openssl@3.5 openssl@1.1.1; do
        if [ -d "${TLSBENCH_RELEASES_DIR:-target/versions}/$release" ]; then stacks+=(--stack "$release"); fi
    done
fi

model=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
echo "many-core.sh: ${model:-an unknown CPU}; $cpus CPUs to use ($(taskset -pc $$ 2>/dev/null | sed 's/.*: //'))" >&2
echo "many-core.sh: in memory, threads 1${threads:+,$threads};" \
    "over TCP, the peak with workers 1${workers:+,$workers}" >&2
started=$SECONDS

scenarios=(--scenario 'handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm'
    --scenario 'handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm')
threads_run=(run --measure time --measure sync "${scenarios[@]}" "${stacks[@]}")
if [ -n "$threads" ]; then threads_run+=(--threads "$threads" --contexts both); fi
"$tlsbench" "${threads_run[@]}" "$@"

peak_run=(run --transport tcp --peak "${scenarios[@]}" "${stacks[@]}")
if [ -n "$workers" ]; then peak_run+=(--workers "$workers"); fi
if ((cpus < 2)); then
    echo "many-core.sh: one CPU: no cores of its own for a server's peak; skipping the TCP run" >&2
else
    "$tlsbench" "${peak_run[@]}" "$@"
fi
echo "many-core.sh: done in $((SECONDS - started)) s" >&2
