#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The probes' arguments, read by gdb, against what a program did.

    probe_args.py [--only PROBE,...] GDB PROGRAM [ARGS...]

Runs PROGRAM EXPECTED-FILE [ARGS...] under gdb with a breakpoint on each
timerwheel probe (break -probe-stap), which prints the probe's name and
its arguments ($_probe_argN) and continues. PROGRAM writes the lines it
expects, one per probe it passes, in order; "*" matches any value. Both
sides are compared as 64-bit words. Exit 77 (a skip) if gdb cannot run
the program; 1 on any difference. --only: break on those probes alone.
"""
import os
import subprocess
import sys
import tempfile

# Each probe and how many arguments it passes (timerwheel-probes(7)).
PROBES = {
    "arm": 5, "cancel": 3, "fire": 5, "advance": 5, "cascade": 3, "post": 4, "apply": 4,
    "wake": 5, "uv_timer_start": 3, "uv_timer_stop": 2, "uv_timer_fire": 2,
}
# Arguments that are strings: the backend's name.
STRINGS = {("wake", 0)}


def gdb_script(path, probes):
    lines = ["set pagination off", "set confirm off", "set breakpoint pending on"]
    for name in probes:
        n = PROBES[name]
        fmt, args = [name], []
        for i in range(n):
            if (name, i) in STRINGS:
                fmt.append("%s")
            else:
                fmt.append("%lu")
            args.append(f"$_probe_arg{i}")
        lines += [f"break -probe-stap timerwheel:{name}", "commands", "silent",
                  f'printf "probe: {" ".join(fmt)}\\n", {", ".join(args)}', "continue", "end"]
    lines += ["run", "info breakpoints"]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def word(s):
    return s if s == "*" or not s.lstrip("-").isdigit() else int(s) % (1 << 64)


def same(want, got):
    w, g = want.split(), got.split()
    return len(w) == len(g) and all(a == "*" or word(a) == word(b) for a, b in zip(w, g))


def main():
    args = sys.argv[1:]
    probes = list(PROBES)
    if args[0] == "--only":
        probes, args = args[1].split(","), args[2:]
    gdb, prog, rest = args[0], args[1], args[2:]
    with tempfile.TemporaryDirectory() as tmp:
        script, expected = os.path.join(tmp, "probes.gdb"), os.path.join(tmp, "expected")
        gdb_script(script, probes)
        # LeakSanitizer cannot run under ptrace; the program's other checks can.
        env = dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
        run = subprocess.run([gdb, "-nx", "-batch", "-x", script, "--args", prog, expected] + rest,
                             capture_output=True, text=True, timeout=120, env=env)
        out = run.stdout + run.stderr
        if "exited with code 0115" in out:
            print(f"SKIP: the program cannot run here:\n{run.stdout}")
            return 77
        if "exited normally" not in out:
            if "ptrace: Operation not permitted" in out:
                print(f"SKIP: gdb cannot trace here:\n{out}")
                return 77
            print(f"FAIL: the program did not exit normally under gdb:\n{out}")
            return 1
        with open(expected, encoding="utf-8") as f:
            want = [line.strip() for line in f if line.strip()]
    got = [line[len("probe: "):].strip() for line in run.stdout.splitlines() if line.startswith("probe: ")]
    bad = len(want) != len(got) or not all(same(w, g) for w, g in zip(want, got))
    for i in range(max(len(want), len(got))):
        w = want[i] if i < len(want) else "(nothing)"
        g = got[i] if i < len(got) else "(nothing)"
        print(f"{'  ' if i < len(want) and i < len(got) and same(w, g) else '! '}want {w:<60} got {g}")
    if bad:
        print("FAIL: the probes passed other arguments than the program expected")
        return 1
    print(f"{len(got)} probes passed the arguments the program expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
