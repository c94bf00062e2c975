#!/usr/bin/env python3
"""CPU of one process start, per variant, interleaved: the child's user+sys.

    bench/start_cpu.py [--runs N] [--label L]... 'CMD ARG...' ['CMD ARG...']...

Each variant is one argument, a command line split as the shell would
(shlex; leading NAME=VALUE words are its environment). Rounds
run every variant once, in turn, so load on the machine falls on all of them
alike; each start is fork + exec + wait4, and its CPU is the child's
ru_utime + ru_stime (microseconds; hyperfine -N gives the mean of the same
two). Prints min, p25, median and p75 per variant and the ratio of medians
to the first. Not a test: it asserts nothing.

    bench/start_cpu.py --runs 60 'build/airlock-js --wasi h.wasm -- h' \\
        'build/airlock-js --self-hosted-cache F --wasi h.wasm -- h'
"""
import os
import shlex
import statistics
import sys


def parse(argv):
    runs, labels, variants = 40, [], []
    i = 0
    while i < len(argv):
        if argv[i] in ("--runs", "--label") and i + 1 < len(argv):
            if argv[i] == "--runs":
                runs = int(argv[i + 1])
            else:
                labels.append(argv[i + 1])
            i += 2
            continue
        variants.append(shlex.split(argv[i]))
        i += 1
    if not variants or not all(variants) or runs < 1:
        sys.exit(__doc__)
    return runs, labels, variants


def split_env(cmd):
    env, i = dict(os.environ), 0
    while i < len(cmd) and "=" in cmd[i] and cmd[i].split("=", 1)[0].isidentifier():
        k, v = cmd[i].split("=", 1); env[k] = v; i += 1
    return env, cmd[i:]


def start(env, argv):
    pid = os.fork()
    if pid == 0:
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1); os.dup2(null, 2)
            os.execvpe(argv[0], argv, env)
        finally:
            os._exit(127)
    _, status, ru = os.wait4(pid, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        sys.exit(f"{' '.join(argv)}: exit status {status}")
    return (ru.ru_utime + ru.ru_stime) * 1000


def main():
    runs, labels, variants = parse(sys.argv[1:])
    prepared = [split_env(v) for v in variants]
    for env, argv in prepared:  # one warm-up each: page cache, caches written
        start(env, argv)
    samples = [[] for _ in prepared]
    for _ in range(runs):
        for i, (env, argv) in enumerate(prepared):
            samples[i].append(start(env, argv))
    base = statistics.median(samples[0])
    print(f"{os.uname().nodename}, {os.cpu_count()} CPUs, load {open('/proc/loadavg').read().split()[:3]}, {runs} runs each")
    for i, s in enumerate(samples):
        s.sort()
        q = statistics.quantiles(s, n=4)
        name = labels[i] if i < len(labels) else " ".join(variants[i])[:60]
        print(f"{name:60s} CPU min {s[0]:6.1f}  p25 {q[0]:6.1f}  median {statistics.median(s):6.1f}  "
              f"p75 {q[2]:6.1f} ms  ({statistics.median(s) / base:.2f}x)")


if __name__ == "__main__":
    main()
