#!/usr/bin/env bash
# Determinism across CPUs (issue 15): every built-in scenario, and every
# congestion-control algorithm on p-rtr-p, runs for 3 s of simulated time
# (a built-in with changes scheduled later runs its own length)
# on amd64 and on arm64 (under qemu-aarch64-static, Debian's
# qemu-user-static), and the two runs' digests must be equal. Go fuses
# x*y+z into an FMA on arm64 but not on amd64, so this catches float code
# written without the explicit float64() conversion, as well as anything
# else that depends on the CPU. Built-ins and algorithms are listed by the
# binary itself (ccscope scenarios, ccscope scenarios --ccs), so new ones
# join automatically. .ci/run calls it after `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
qemu=$(command -v qemu-aarch64-static || true)
if [ -z "$qemu" ]; then
	echo "crosscpu: qemu-aarch64-static not found (apt-get install qemu-user-static)" >&2
	exit 1
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/amd64" ./server/cmd/ccscope
GOARCH=arm64 CGO_ENABLED=0 go build -o "$dir/arm64" ./server/cmd/ccscope
export dir qemu
{
	"$dir/amd64" scenarios | tail -n +2 | awk '{print $1}'
	"$dir/amd64" scenarios --ccs | sed 's/^/p-rtr-p flows.f0.cc=/'
	echo "p-rtr-p flows.f0.tcp.hz=300" # the one HZ whose conversions are fixed-point
} >"$dir/cases"
# check SCENARIO [SET]: prints "ok|DIFF case amd64-digest arm64-digest".
# A scenario whose scheduled changes fall after 3 s (cut short, it would be
# invalid) runs for its own duration.
check() {
	local args=(run "$1" --json)
	[ -n "${2:-}" ] && args+=(--set "$2")
	"$dir/amd64" "${args[@]}" --duration 3s >/dev/null 2>&1 && args+=(--duration 3s)
	local a b
	a=$("$dir/amd64" "${args[@]}" | grep -o '"digest":"[0-9a-f]*"')
	b=$("$qemu" "$dir/arm64" "${args[@]}" | grep -o '"digest":"[0-9a-f]*"')
	if [ -n "$a" ] && [ "$a" = "$b" ]; then
		echo "ok   $1 ${2:-} ${a#*:}"
	else
		echo "DIFF $1 ${2:-} amd64 ${a#*:} arm64 ${b#*:}"
	fi
}
export -f check
start=$SECONDS
xargs -P "$(nproc)" -L 1 bash -c 'check "$@"' _ <"$dir/cases" | sort | tee "$dir/results"
n=$(wc -l <"$dir/results")
bad=$(grep -c '^DIFF' "$dir/results" || true)
echo "crosscpu: $n runs (3 s each, or the scenario's own duration) on amd64 and arm64 (qemu) in $((SECONDS - start)) s; $bad differ"
[ "$bad" -eq 0 ]
