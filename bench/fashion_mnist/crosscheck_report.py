#!/usr/bin/python3
"""Compares a lakerun run and a Python PyTorch DDP run of the same configuration from their metrics files.

  crosscheck_report.py --world 2 --cpp 'DIR/cpp.{rank}.jsonl' --py 'DIR/py.{rank}.jsonl' --init-weights W \
      [--loss-tol 1e-4] [--acc-tol 0.001]

Prints the per-step loss difference (max over steps and ranks), both final test accuracies, the parameter checksum of
each side, and whether Python's own seed-1 initialization already equals the C++ initial weights. Exits 1 when a
difference exceeds its tolerance.
"""
import argparse
import json
import sys


def read(pattern, rank):
    steps, evals, final = [], [], None
    with open(pattern.replace("{rank}", str(rank))) as f:
        for line in f:
            rec = json.loads(line)
            if rec["type"] == "step":
                steps.append((rec["step"], rec["loss"]))
            elif rec["type"] == "eval":
                evals.append(rec)
            elif rec["type"] == "final":
                final = rec
    return steps, evals, final


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--world", type=int, default=2)
    p.add_argument("--cpp", required=True)
    p.add_argument("--py", required=True)
    p.add_argument("--init-weights", default="")
    p.add_argument("--loss-tol", type=float, default=1e-4)
    p.add_argument("--acc-tol", type=float, default=0.001)
    args = p.parse_args()

    ok = True
    max_diff, where, n_steps = 0.0, None, 0
    for rank in range(args.world):
        cpp_steps, cpp_evals, cpp_final = read(args.cpp, rank)
        py_steps, py_evals, py_final = read(args.py, rank)
        if [s for s, _ in cpp_steps] != [s for s, _ in py_steps] or not cpp_steps:
            print(f"rank {rank}: step sequences differ: C++ {len(cpp_steps)} steps, Python {len(py_steps)} steps")
            ok = False
            continue
        n_steps = len(cpp_steps)
        for (step, a), (_, b) in zip(cpp_steps, py_steps):
            if where is None or abs(a - b) > max_diff:
                max_diff, where = abs(a - b), (rank, step)
        if rank == 0:
            cpp_acc, py_acc = cpp_evals[-1]["test_accuracy"], py_evals[-1]["test_accuracy"]
            cpp_loss, py_loss = cpp_evals[-1]["test_loss"], py_evals[-1]["test_loss"]
            first = (cpp_steps[0][1], py_steps[0][1])
            last = (cpp_steps[-1][1], py_steps[-1][1])
        if cpp_final and py_final:
            print(f"rank {rank}: parameter checksum C++ {cpp_final['param_checksum']:.9f}  "
                  f"Python {py_final['param_checksum']:.9f}")
    if not ok:
        return 1
    print(f"steps compared: {n_steps} per rank x {args.world} ranks")
    print(f"first-step loss (rank 0): C++ {first[0]:.6f}  Python {first[1]:.6f}")
    print(f"last-step loss (rank 0):  C++ {last[0]:.6f}  Python {last[1]:.6f}")
    print(f"max per-step loss difference: {max_diff:.3e} (rank {where[0]}, step {where[1]}); tolerance {args.loss_tol}")
    print(f"test accuracy: C++ {cpp_acc:.4f}  Python {py_acc:.4f}  (test loss {cpp_loss:.6f} vs {py_loss:.6f})")

    if args.init_weights:
        sys.path.insert(0, __file__.rsplit("/", 1)[0])
        import torch
        from ddp_peer import make_net
        torch.manual_seed(1)
        own = make_net(torch, True).state_dict()
        saved = torch.load(args.init_weights, weights_only=False)  # lakerun's own file (see ddp_peer.py)
        same = all(torch.equal(own[k], saved[k]) for k in saved)
        print(f"Python's own seed-1 initialization equals the C++ initial weights: {'yes' if same else 'no'}")

    if max_diff > args.loss_tol:
        print("FAIL: per-step losses differ beyond the tolerance")
        ok = False
    if abs(cpp_acc - py_acc) > args.acc_tol:
        print("FAIL: test accuracies differ beyond the tolerance")
        ok = False
    print("crosscheck: " + ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
