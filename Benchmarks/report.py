#!/usr/bin/env python3
"""Turns a benchmark run (JSON lines from lanyard-bench) into the Markdown tables of BENCHMARKS.md.

    report.py RUN.jsonl [MICRO.jsonl [STREAMS.jsonl]]          the tables
    report.py --best-concurrency TARGET SCENARIO RUN.jsonl     the sweep's best concurrency, for run.sh's rounds
"""
import json, statistics, sys

def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]

def best_of(rows, target, scenario, database=None, concurrency=None):
    rows = [r for r in rows if r["target"] == target and r["scenario"] == scenario
            and (database is None or r["database"] == database)
            and (concurrency is None or r["concurrency"] == concurrency)]
    return max(rows, key=lambda r: r["requests_per_second"]) if rows else None

if sys.argv[1] == "--best-concurrency":
    found = best_of([r for r in load(sys.argv[4]) if r.get("round") is None], sys.argv[2], sys.argv[3])
    print(found["concurrency"] if found else "")
    sys.exit(0)

everything = load(sys.argv[1])
# The sweep (every scenario at every concurrency) and the paired rounds after it (`--round`).
runs = [r for r in everything if r.get("round") is None]
rounds = [r for r in everything if r.get("round") is not None]
micro = {m["name"]: m for m in load(sys.argv[2])} if len(sys.argv) > 2 else {}
streams = load(sys.argv[3]) if len(sys.argv) > 3 else []

CPU_KEYS = ("server_cpu_microseconds_per_request", "database_cpu_microseconds_per_request",
            "client_cpu_microseconds_per_request")

def cpu(r, key):
    value = r.get(key)
    return f"{value:.0f}" if value is not None else "—"

print("CPU columns: microseconds of CPU per request, of the server's processes, of PostgreSQL's (its backends), and of the load generator.\n")
print("| target | db | scenario | c | req/s | p50 ms | p99 ms | p99.9 ms | ok/sent | peak RSS MB | CPU server µs | CPU database µs | CPU client µs |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
SCENARIOS = ["signin_new", "signin_existing", "refresh", "me", "link", "healthz", "readyz"]
def order(r):
    return (r["target"] != "lanyard", r["database"] != "sqlite",
            SCENARIOS.index(r["scenario"]) if r["scenario"] in SCENARIOS else len(SCENARIOS), r["concurrency"])

for r in sorted(runs, key=order):
    rss = r.get("server_peak_rss_megabytes")
    rss = f"{rss:.0f}" if rss is not None else "n/a"
    print(f"| {r['target']} | {r['database']} | {r['scenario']} | {r['concurrency']} | {r['requests_per_second']:.0f} | "
          f"{r['p50_milliseconds']:.2f} | {r['p99_milliseconds']:.2f} | {r['p999_milliseconds']:.2f} | "
          f"{r['ok']}/{r['sent']} | {rss} | " + " | ".join(cpu(r, key) for key in CPU_KEYS) + " |")

def best(target, scenario, database=None, concurrency=None):
    return best_of(runs, target, scenario, database, concurrency)

print("\n**Lanyard / allauth** (Lanyard at concurrency 64, allauth at its best concurrency)\n")
print("| scenario | Lanyard SQLite req/s | Lanyard PostgreSQL req/s | allauth best req/s (c) | ratio SQLite | ratio PostgreSQL |")
print("|---|---:|---:|---:|---:|---:|")
for scenario in ["signin_new", "signin_existing", "me", "link", "refresh"]:
    s, p, a = best("lanyard", scenario, "sqlite", 64), best("lanyard", scenario, "postgres", 64), best("allauth", scenario)
    def rps(r): return f"{r['requests_per_second']:.0f}" if r else "—"
    def ratio(r): return f"{r['requests_per_second'] / a['requests_per_second']:.0f}×" if r and a and a["requests_per_second"] else "—"
    peer = f"{a['requests_per_second']:.0f} (c={a['concurrency']})" if a else "no equivalent"
    print(f"| {scenario} | {rps(s)} | {rps(p)} | {peer} | {ratio(s)} | {ratio(p)} |")

print("\n**PostgreSQL / SQLite** (Lanyard at concurrency 64; CPU per request: Lanyard + PostgreSQL + load generator, all on the same two cores)\n")
print("| scenario | SQLite req/s | PostgreSQL req/s | PostgreSQL / SQLite | CPU µs SQLite | CPU µs PostgreSQL |")
print("|---|---:|---:|---:|---:|---:|")
for scenario in SCENARIOS:
    s, p = best("lanyard", scenario, "sqlite", 64), best("lanyard", scenario, "postgres", 64)
    if not s or not p:
        continue
    def total(r):
        known = [r[key] for key in CPU_KEYS if r.get(key) is not None]
        return " + ".join(f"{v:.0f}" for v in known) if known else "—"
    share = 100 * p["requests_per_second"] / s["requests_per_second"] if s["requests_per_second"] else 0
    print(f"| {scenario} | {s['requests_per_second']:.0f} | {p['requests_per_second']:.0f} | {share:.0f}% | {total(s)} | {total(p)} |")

if rounds:
    print("\n**Paired rounds** (after each scenario's sweep, per round, back to back: Lanyard on PostgreSQL and on SQLite at "
          "concurrency 64, then allauth at its best concurrency in the sweep; medians over the rounds)\n")
    print("| scenario | round | SQLite req/s | SQLite p99 ms | PostgreSQL req/s | allauth req/s (c) | SQLite / allauth | PostgreSQL / SQLite |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    median = statistics.median
    for scenario in SCENARIOS:
        rates, p99s, ratios, shares = [], [], [], []
        for number in sorted({r["round"] for r in rounds if r["scenario"] == scenario}):
            def phase(target, database):
                return next((r for r in rounds if r["round"] == number and r["scenario"] == scenario
                             and r["target"] == target and r["database"] == database), None)
            s, p, a = phase("lanyard", "sqlite"), phase("lanyard", "postgres"), phase("allauth", "sqlite")
            if not s:
                continue
            rates.append(s["requests_per_second"])
            p99s.append(s["p99_milliseconds"])
            cells = [scenario, str(number), f"{s['requests_per_second']:.0f}", f"{s['p99_milliseconds']:.2f}",
                     f"{p['requests_per_second']:.0f}" if p else "—"]
            if a and a["requests_per_second"]:
                ratios.append(s["requests_per_second"] / a["requests_per_second"])
                cells += [f"{a['requests_per_second']:.0f} (c={a['concurrency']})", f"{ratios[-1]:.0f}×"]
            else:
                cells += ["no equivalent", "—"]
            if p and s["requests_per_second"]:
                shares.append(p["requests_per_second"] / s["requests_per_second"])
                cells.append(f"{100 * shares[-1]:.0f}%")
            else:
                cells.append("—")
            print("| " + " | ".join(cells) + " |")
        if rates:
            cells = [f"**{scenario}**", "**median**", f"**{median(rates):.0f}**", f"**{median(p99s):.2f}**", "", "",
                     f"**{median(ratios):.0f}×**" if ratios else "—", f"**{100 * median(shares):.0f}%**" if shares else "—"]
            print("| " + " | ".join(cells) + " |")

if micro:
    def us(name): return micro[name]["microseconds_per_operation"] if name in micro else None
    rs, sign, verify = us("rs256_verify (ID token)"), us("es256_sign (access token)"), us("es256_verify (access token)")
    work = {"signin_new": rs + sign, "signin_existing": rs + sign, "refresh": sign, "me": verify, "link": verify + rs}
    print("\n**Crypto ceiling**: signature work per request alone, on both cores (2 × 1e6 / µs), and Lanyard SQLite at c=64 as a share of it\n")
    print("| scenario | signature work per request | ceiling req/s (2 cores) | Lanyard SQLite req/s | share |")
    print("|---|---|---:|---:|---:|")
    names = {"signin_new": "RS256 verify + ES256 sign", "signin_existing": "RS256 verify + ES256 sign",
             "refresh": "ES256 sign", "me": "ES256 verify", "link": "ES256 verify + RS256 verify"}
    for scenario, micros in work.items():
        ceiling = 2 * 1e6 / micros
        s = best("lanyard", scenario, "sqlite", 64)
        share = f"{100 * s['requests_per_second'] / ceiling:.0f}%" if s else "—"
        measured = f"{s['requests_per_second']:.0f}" if s else "—"
        print(f"| {scenario} | {names[scenario]} ({micros:.0f} µs) | {ceiling:.0f} | {measured} | {share} |")
    print("\n**Micro-benchmarks** (one core)\n")
    print("| operation | ops/s | µs/op |\n|---|---:|---:|")
    for m in micro.values():
        print(f"| {m['name']} | {m['operations_per_second']:.0f} | {m['microseconds_per_operation']:.2f} |")

if streams:
    print("\n**Change streams** (writes through one instance, the watched stream on the same or, across, the other)\n")
    print("| db | idle streams | KiB per idle stream | commit-to-event p50 ms | p99 ms | writes/s with streams | without | change | server µs CPU per write with / without |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in streams:
        where = r["database"] + (" (across instances)" if r["cross_instance"] else "")
        loss = 100 * (r["writes_per_second_with_streams"] / r["writes_per_second_without"] - 1) if r["writes_per_second_without"] else 0
        print(f"| {where} | {r['idle_streams']} | {r['kib_per_idle_stream']:.1f} | {r['latency_p50_ms']:.1f} | "
              f"{r['latency_p99_ms']:.1f} | {r['writes_per_second_with_streams']:.0f} | {r['writes_per_second_without']:.0f} | "
              f"{loss:+.0f}% | {r.get('server_cpu_us_per_write_with_streams', 0):.0f} / {r.get('server_cpu_us_per_write_without', 0):.0f} |")
