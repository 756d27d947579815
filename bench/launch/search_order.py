"""The libtorch symbol-search order of cmake/LakerunTorchSearchOrder.cmake: derive it, and check that it is safe.

usage: search_order.py derive PROGRAM [K]       print the K (default 40) libraries that receive most symbol
                                                bindings when PROGRAM starts, in their breadth-first order
       search_order.py check PLAIN ORDERED      exit 1 unless every symbol reference binds to the same library in
                                                ORDERED (linked with the list) as in PLAIN (linked without), apart
                                                from C++ vague-linkage copies (weak or unique symbols: inline
                                                functions and template instances, identical by the ODR)

Both run the programs under the dynamic loader's LD_DEBUG tracing (bindings, scopes). Moving a library ahead in
the search list can only change a binding when another library defines the same symbol; `derive` keeps the
libraries' relative order, and libraries that define C symbols of a listed one (libblas.so.3 / liblapack.so.3
beside libopenblas.so.0, libbsd beside libnetcdf's strlcat) must be added by hand until `check` passes.
"""
import collections
import os
import re
import subprocess
import sys
import tempfile

BINDING_RE = re.compile(r"binding file (\S+) \[\d+\] to (\S+) \[\d+\]: normal symbol `([^']+)'(?: \[([^\]]+)\])?")


def trace(program, what):
    """The LD_DEBUG=<what> lines of one start of `program` (its own output is discarded)."""
    with tempfile.TemporaryDirectory() as tmp:
        # One thread (OpenBLAS starts its pool at load otherwise): the trace lines of two threads can interleave.
        env = dict(os.environ, LD_DEBUG=what, LD_DEBUG_OUTPUT=os.path.join(tmp, "trace"), OPENBLAS_NUM_THREADS="1",
                   OMP_NUM_THREADS="1")
        subprocess.run([program], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        lines = []
        for name in os.listdir(tmp):
            with open(os.path.join(tmp, name), errors="replace") as f:
                lines += f.read().splitlines()
        return lines


def bindings(program):
    """{(referencing object, symbol, version): {defining objects}}; the program itself is named <exe>."""
    exe = os.path.realpath(program)
    out = collections.defaultdict(set)
    for line in trace(program, "bindings"):
        m = BINDING_RE.search(line)
        if not m or "linux-vdso" in line:
            continue
        source = "<exe>" if os.path.realpath(m.group(1)) == exe else m.group(1)
        target = "<exe>" if os.path.realpath(m.group(2)) == exe else m.group(2)
        out[(source, m.group(3), m.group(4))].add(target)
    return out


def symbol_kinds(library, cache={}):
    """nm's type letter of every dynamic symbol `library` defines (W/V weak, u unique, T/D/B... strong)."""
    if library not in cache:
        text = subprocess.run(["nm", "-D", "--defined-only", library], capture_output=True, text=True).stdout
        kinds = {}
        for line in text.splitlines():
            parts = line.split()
            if len(parts) >= 3:
                kinds[parts[2].split("@")[0]] = parts[1]
        cache[library] = kinds
    return cache[library]


def check(plain, ordered):
    a, b = bindings(plain), bindings(ordered)
    if len(a) < 1000:
        sys.exit(f"search_order.py: only {len(a)} bindings traced from {plain}; is it linked to libtorch?")
    moved, changed = 0, []
    # A reference traced in one program only is not compared: the loader skips (and does not trace) a lookup
    # that repeats the previous one of the same object, and which lookups repeat can differ (1 of ~137,000 here).
    one_sided = [key for key in set(a) ^ set(b) if key[0] != "<exe>"]
    for key in sorted(set(a) & set(b), key=str):
        if a[key] == b[key]:
            continue
        kinds = [symbol_kinds(t).get(key[1], "?") for t in a[key] | b[key] if t != "<exe>"]
        if kinds and all(k in "WVu" for k in kinds):
            moved += 1
        else:
            changed.append((key, a[key], b[key]))
    changed = [c for c in changed if c[0][0] != "<exe>"]  # the executables' own references differ by design
    print(f"{len(a)} references; {moved} bind to another copy of a C++ vague-linkage symbol; "
          f"{len(changed)} other changes; {len(one_sided)} traced in one program only")
    if len(one_sided) > 100:
        print("  too many references traced in one program only to compare the two")
        return 1
    for (source, symbol, version), old, new in changed[:20]:
        print(f"  {source}: {symbol} {version or ''}: {sorted(old or [])} -> {sorted(new or [])}")
    return 0 if not changed else 1


def derive(program, k):
    scope = trace(program, "scopes")
    exe = os.path.realpath(program)
    order = None
    for i, line in enumerate(scope):
        if re.search(r"object=(\S+) \[0\]$", line) and os.path.realpath(line.split("object=")[1].split()[0]) == exe:
            order = scope[i + 1].split("scope 0:")[1].split()
            break
    if order is None:
        sys.exit("search_order.py: no initial scope for the program in the LD_DEBUG=scopes trace")
    counts = collections.Counter()
    for (_, _, _), targets in bindings(program).items():
        for t in targets:
            counts[t] += 1
    # The executable's own DT_NEEDED entries stay first; rank the others by bindings received.
    own = subprocess.run(["readelf", "-d", program], capture_output=True, text=True).stdout.count("(NEEDED)")
    candidates = [lib for lib, _ in counts.most_common() if lib in order and order.index(lib) > own][:k]
    print(" ".join(os.path.basename(lib) for lib in sorted(candidates, key=order.index)))
    return 0


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "derive":
        return derive(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 40)
    if len(sys.argv) == 4 and sys.argv[1] == "check":
        return check(sys.argv[2], sys.argv[3])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
