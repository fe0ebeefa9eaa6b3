#!/usr/bin/env python3
"""mpi_scaling.py — projects weak and strong scaling of `talus erode` under
MPI to 64..1024 GPUs (issue 5) from measured per-cell compute time, the strip
sizes talus exchanges, and stated link assumptions. Prints Markdown tables.

Model of one generation (K steps) on a rank that owns an n x n block of
tiles of core c (halo H = K R, strips of bytes-per-cell beta):
  compute  = t_cell * sum_{i<K} (c + 2 (H - i R))^2 per tile: the updated
             region shrinks by R per step from core + 2H to core (tiler.c);
  strips   = every tile on the block's edge sends its strips across: per
             block side n * c * H cells, per corner H * H; beta bytes a cell
             (halo.h: 2 + 4 (11 L + hard) for L layers in use);
  link     = 8 messages (one per neighbour rank) * alpha + bytes / bw_link,
             plus staging device<->host both ways: 2 * bytes / bw_pcie;
  overlap  = interior tiles ((n-2)^2) compute while strips travel; border
             tiles wait: T = max(link, interior) + border compute;
  agree    = 3 small collectives per generation (error agreement twice, the
             run's progress): 3 * 2 log2(P) * alpha_coll.
Weak scaling: each GPU keeps a 4096^2 block (2 x 2 tiles of 2048); the
efficiency is T(1 rank, no neighbours) / T(P). Strong scaling: a fixed
32768^2 map (1.07 Gcells) over P GPUs; blocks of 32768 / sqrt(P) cut in
n x n tiles of side / n <= 2048; speedup and efficiency against P = 64.
"""
import argparse
import math

MODELS = {
    # name: (R, beta [bytes/cell], CPU ns per cell-step measured on one core)
    # R: heightfield + thermal 5, layered 13 (3 + 2P, P = 5 support
    # iterations); beta from the bytes exchanged per generation measured by
    # benchmarks/bench_mpi.sh (8.512 MB for 170 240 cells; 10.296 MB for
    # 223 808 cells: 50 and 46 bytes a cell, one layer in use). CPU time per
    # cell-step from benchmarks/RESULTS.md (talus_bench 2048^2, per CPU-s).
    "heightfield+thermal": (5, 50.0, 40.0),
    "layered (rivers-rain)": (13, 46.0, 255.0),
    # Worst case for the links: every strip cell with 8 layers in use, at
    # the measured chasm-source (Nz 8) cost of 997 CPU-ms per 2048^2 step.
    "layered, 8 layers in use (strip worst case)": (13, 2 + 4 * 11 * 8, 238.0),
}


def gen_time(a, R, beta, t_cell, c, n, K, P, neighbours=True):
    H = K * R
    per_tile = t_cell * sum((c + 2 * (H - i * R)) ** 2 for i in range(K))
    border = n * n - max(n - 2, 0) ** 2
    interior = (n * n - border) * per_tile
    if not neighbours:
        return n * n * per_tile, 0.0
    cells = 4 * n * c * H + 4 * H * H
    bytes_ = cells * beta
    link = 8 * a.alpha + bytes_ / a.bw_link + 2 * bytes_ / a.bw_pcie
    agree = 3 * 2 * math.log2(max(P, 2)) * a.alpha_coll
    return max(link, interior) + border * per_tile + agree, bytes_


def weak(a, name):
    R, beta, cpu_ns = MODELS[name]
    t_cell = cpu_ns * 1e-9 / a.gpu_factor
    c, n, K = 2048, 2, a.K
    t1, _ = gen_time(a, R, beta, t_cell, c, n, K, 1, neighbours=False)
    rows = []
    for P in a.ranks:
        t, b = gen_time(a, R, beta, t_cell, c, n, K, P)
        cells = P * (n * c) ** 2 * K
        rows.append((P, f"{int(math.sqrt(P) * n * c)}²", t * 1e3, b / 1e6, cells / t / 1e9, t1 / t))
    return rows


def strong(a, name):
    R, beta, cpu_ns = MODELS[name]
    t_cell = cpu_ns * 1e-9 / a.gpu_factor
    N, K, rows, base = 32768, a.K, [], None
    for P in a.ranks:
        side = N / math.sqrt(P)
        n = math.ceil(side / 2048)
        c = side / n
        t, b = gen_time(a, R, beta, t_cell, c, n, K, P)
        base = base or (P, t)
        sp = base[1] / t
        rows.append((P, f"{side:.0f}² ({n}x{n} of {c:.0f})", t * 1e3, b / 1e6, N * N * K / t / 1e9,
                     sp * base[0] / P))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranks", type=int, nargs="+", default=[64, 128, 256, 512, 1024])
    ap.add_argument("--K", type=int, default=8, help="steps per exchange")
    ap.add_argument("--gpu-factor", type=float, default=40.0,
                    help="GPU speed over one measured CPU core (assumption)")
    ap.add_argument("--alpha", type=float, default=5e-6, help="message latency [s]")
    ap.add_argument("--alpha-coll", type=float, default=5e-6, help="collective step latency [s]")
    ap.add_argument("--bw-link", type=float, default=25e9, help="link bandwidth per GPU [B/s]")
    ap.add_argument("--bw-pcie", type=float, default=25e9, help="host<->device [B/s]")
    a = ap.parse_args()
    print(f"Assumptions: GPU = {a.gpu_factor:g}x one CPU core, link {a.bw_link / 1e9:g} GB/s "
          f"and {a.alpha * 1e6:g} us per message, PCIe staging {a.bw_pcie / 1e9:g} GB/s each way, "
          f"collectives {a.alpha_coll * 1e6:g} us per log2(P) stage, K = {a.K}.\n")
    for name in MODELS:
        print(f"**{name}** — weak scaling (4096² per GPU)\n")
        print("| GPUs | map | ms / generation | strip MB sent per GPU per generation | Gcell-steps/s | efficiency |")
        print("|---|---|---|---|---|---|")
        for P, m, t, b, g, e in weak(a, name):
            print(f"| {P} | {m} | {t:.1f} | {b:.2f} | {g:.0f} | {e:.2f} |")
        print(f"\n**{name}** — strong scaling (32768² map)\n")
        print("| GPUs | block per GPU | ms / generation | strip MB sent per GPU per generation | Gcell-steps/s | efficiency vs 64 |")
        print("|---|---|---|---|---|---|")
        for P, m, t, b, g, e in strong(a, name):
            print(f"| {P} | {m} | {t:.1f} | {b:.2f} | {g:.0f} | {e:.2f} |")
        print()


if __name__ == "__main__":
    main()
