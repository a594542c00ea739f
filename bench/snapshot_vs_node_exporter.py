#!/usr/bin/env python3
"""Benchmark (on demand, not in CI): `ibcollect snapshot --root TREE --format json` as a
whole process against one HTTP scrape of prometheus-node-exporter's infiniband collector
on the same tree, side by side in one run.

The tree is SYNTHETIC: the real mlx5_0 capture (tests/fixtures/real/sysfs/
sysfs_procfs-fixture_mlx5_0_hw-counters-errors.tree) replicated as mlx5_0..mlx5_7 into a
temporary directory by this script; it is never committed.

Prints the medians, their ratio and ibcollect's peak RSS. Targets (issue 2): ratio <= 0.5,
peak RSS <= 16 MiB. Also `ibcollect --version` against /bin/true and the snapshot against the
read floor, both measured in the same interleaved runs. Targets (issue 24): snapshot <= 1.5x
the read floor, `--version` <= 1.5 ms over /bin/true.

usage: bench/snapshot_vs_node_exporter.py [--runs N] [--ibcollect PATH] [--hcas 8]
"""
import argparse
import http.client
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REAL_DEV = os.path.join(
    REPO, "tests/fixtures/real/sysfs/sysfs_procfs-fixture_mlx5_0_hw-counters-errors.tree/"
    "fixtures/sys/class/infiniband/mlx5_0")


def build_tree(dest, hcas):
    ib = os.path.join(dest, "sys/class/infiniband")
    os.makedirs(ib)
    for i in range(hcas):
        shutil.copytree(REAL_DEV, os.path.join(ib, "mlx5_%d" % i))
    with open(os.path.join(dest, "SYNTHETIC-README"), "w") as f:
        f.write("SYNTHETIC tree: %d copies of the real mlx5_0 capture (%s), made by %s\n"
                % (hcas, REAL_DEV, os.path.basename(__file__)))
    return dest


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


DEVNULL = os.open(os.devnull, os.O_WRONLY)


def run_process(argv):
    """Wall time (s) of one whole process, spawned directly (no shell), output discarded."""
    t0 = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, os.environ,
                         file_actions=[(os.POSIX_SPAWN_DUP2, DEVNULL, 1), (os.POSIX_SPAWN_DUP2, DEVNULL, 2)])
    _, status = os.waitpid(pid, 0)
    dt = time.perf_counter() - t0
    return dt, os.waitstatus_to_exitcode(status)


def run_ibcollect(exe, tree):
    # The kept copy (snapshot always writes one, durably) goes beside the tree, not into the
    # working directory; -o --force replaces it each run.
    kept = os.path.join(os.path.dirname(tree), "kept.ibsnap")
    dt, code = run_process([exe, "snapshot", "--root", tree, "--format", "json", "-o", kept, "--force"])
    if code >= 3:
        sys.exit("ibcollect failed with exit code %d" % code)
    return dt


def peak_rss_kib(exe, tree):
    """Peak RSS of ibcollect as GNU time reports it (the spawning process's own memory
    would otherwise count: ru_maxrss of a child includes the parent's pages before exec)."""
    kept = os.path.join(os.path.dirname(tree), "kept.ibsnap")
    out = subprocess.run(["/usr/bin/time", "-f", "%M", exe, "snapshot", "--root", tree, "--format", "json",
                          "-o", kept, "--force"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return int(out.stderr.strip().splitlines()[-1])


def scrape(conn):
    t0 = time.perf_counter()
    conn.request("GET", "/metrics")
    body = conn.getresponse().read()
    dt = time.perf_counter() - t0
    if b"node_infiniband_" not in body:
        sys.exit("node_exporter served no infiniband metrics: is the tree right?")
    return dt


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=60)
    ap.add_argument("--hcas", type=int, default=8)
    ap.add_argument("--ibcollect", default=os.path.join(REPO, "build/release/agent/ibcollect"))
    args = ap.parse_args()
    if not os.access(args.ibcollect, os.X_OK):
        sys.exit("no ibcollect at %s: run scripts/demo.sh (or pass --ibcollect)" % args.ibcollect)
    exporter = shutil.which("prometheus-node-exporter")
    if not exporter:
        sys.exit("prometheus-node-exporter is not installed: run scripts/setup.sh")

    with tempfile.TemporaryDirectory(prefix="ibc-bench-") as tmp:
        tree = build_tree(os.path.join(tmp, "tree"), args.hcas)
        port = free_port()
        ne = subprocess.Popen([exporter, "--path.sysfs=" + os.path.join(tree, "sys"),
                               "--path.procfs=" + os.path.join(tree, "proc"),
                               "--collector.disable-defaults", "--collector.infiniband",
                               "--web.listen-address=127.0.0.1:%d" % port],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            conn = None
            for _ in range(200):
                try:
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                    conn.connect()
                    break
                except OSError:
                    conn = None
                    time.sleep(0.02)
            if conn is None:
                sys.exit("node_exporter did not start")
            # Warm both up (page cache, Go runtime).
            for _ in range(5):
                scrape(conn)
                run_ibcollect(args.ibcollect, tree)
            ib_times, ne_times, floor, read_floor, version = [], [], [], [], []
            true = shutil.which("true")
            # The I/O floor: one process that only reads every file of the tree (what
            # ibcollect must read: counters, hw_counters and attributes), parsing nothing.
            files = sorted(os.path.join(d, f) for d, _, fs in os.walk(tree) for f in fs)
            reader = os.path.join(tmp, "read_floor")
            subprocess.run(["cc", "-O2", "-o", reader, os.path.join(REPO, "bench/read_floor.c")],
                           check=True)
            cat = [reader] + files
            counter_files = sum(1 for f in files if "/counters/" in f)
            for _ in range(args.runs):  # interleaved so all see the same machine state
                ib_times.append(run_ibcollect(args.ibcollect, tree))
                ne_times.append(scrape(conn))
                floor.append(run_process([true])[0])
                read_floor.append(run_process(cat)[0])
                version.append(run_process([args.ibcollect, "--version"])[0])
            conn.close()
            rss = [peak_rss_kib(args.ibcollect, tree) for _ in range(5)]
        finally:
            ne.terminate()
            ne.wait()

    ib_med = statistics.median(ib_times)
    ne_med = statistics.median(ne_times)
    print("tree: %d x real mlx5_0 capture (synthetic replication), %d runs each, interleaved"
          % (args.hcas, args.runs))
    print("ibcollect snapshot --format json (whole process): median %.2f ms  (p10 %.2f, p90 %.2f)"
          % (ib_med * 1e3, sorted(ib_times)[len(ib_times) // 10] * 1e3,
             sorted(ib_times)[len(ib_times) * 9 // 10] * 1e3))
    print("node_exporter infiniband scrape (HTTP, keep-alive): median %.2f ms  (p10 %.2f, p90 %.2f)"
          % (ne_med * 1e3, sorted(ne_times)[len(ne_times) // 10] * 1e3,
             sorted(ne_times)[len(ne_times) * 9 // 10] * 1e3))
    print("process floor on this machine, /bin/true spawned the same way: median %.2f ms"
          % (statistics.median(floor) * 1e3))
    print("read floor, bench/read_floor.c opening, reading and closing the %d files: median %.2f ms"
          % (len(files), statistics.median(read_floor) * 1e3))
    print("  (node_exporter reads the %d files under ports/*/counters plus a few attributes, not"
          " hw_counters; ibcollect reads all %d)" % (counter_files, len(files)))
    ratio = ib_med / ne_med
    print("ratio ibcollect/node_exporter: %.2f  (target <= 0.5: %s)" % (ratio, "met" if ratio <= 0.5 else "MISSED"))
    over_floor = ib_med / statistics.median(read_floor)
    print("ibcollect snapshot / read floor: %.2fx  (target <= 1.5x: %s)"
          % (over_floor, "met" if over_floor <= 1.5 else "MISSED"))
    start = (statistics.median(version) - statistics.median(floor)) * 1e3
    print("ibcollect --version: median %.2f ms, %.2f ms over /bin/true  (target <= 1.5 ms: %s)"
          % (statistics.median(version) * 1e3, start, "met" if start <= 1.5 else "MISSED"))
    peak = max(rss) / 1024.0
    print("ibcollect peak RSS: %.1f MiB  (target <= 16 MiB: %s)" % (peak, "met" if peak <= 16 else "MISSED"))


if __name__ == "__main__":
    main()
