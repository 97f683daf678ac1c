#!/usr/bin/env python3
"""Every installed header compiles on its own in an installed tree, with only the flags pkg-config
gives a consumer (blr, and blr-torch for include/blr/torch): a header that leans on an include it
does not make, or includes a header that is not installed (before 2026-11-28:
blr/torch/optim/table1_rows.hpp included the uninstalled blr/algorithms/table1.hpp), fails here.
The checks' own headers (include/blr/torch/checks) are not installed; that is asserted too.

Each header is parsed (g++ -fsyntax-only) in a translation unit of its own, in parallel. Most of
that time was the same third-party and blr headers parsed again in every unit (stop 41: 176
units, about 900 s of CPU, the suite's longest test; about 350 s with the hubs below, measured
on 177 headers in stop 42). So a unit may start from a precompiled
*hub*: a few headers precompiled once (GCC's .gch, loaded with -include). A hub is used for a
header only when every file the hub reads is in that header's own include closure (its blr
headers read from the text, the third-party headers' closures from `g++ -M`), so the hub adds no
declaration the header does not include itself; only the order differs (the hub first). Each
hub's own headers are checked like the others, without that hub. The check checks itself: two
planted headers, each using a name from a header it does not include and each beside a hub it
qualifies for (core: the rule hub; torch: the ATen hub), must fail, or the test fails.

Usage: headers_alone.py BUILD_DIR HAVE_TORCH(ON|OFF)
"""
import concurrent.futures
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

# Hubs, preferred in this order (the first that applies to a header is used). Each is a list of
# include spellings; a hub applies when all of them are in the header's include closure.
TORCH_HUBS = [
    ("nn", ["<torch/nn/module.h>"]),
    ("aten", ["<ATen/Tensor.h>"]),
]
CORE_HUBS = [
    ("rule", ['"blr/rule/gaussian_rule.hpp"']),
    ("types", ['"blr/core/types.hpp"']),
]
MIN_USERS = 3  # a hub costs one compilation (10-25 s) and a few hundred MB: built for 3 or more
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"][^>"]+[>"])')
CONDITIONAL = re.compile(r"^\s*#\s*(if|ifdef|ifndef)\b")
END_IF = re.compile(r"^\s*#\s*endif\b")


def fail(message):
    print(f"headers_alone: {message}", file=sys.stderr)
    sys.exit(1)


def run(command, **kw):
    return subprocess.run(command, capture_output=True, text=True, **kw)


def pkg_config_flags(prefix, package):
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    r = run(["pkg-config", "--cflags", package], env=env)
    if r.returncode:
        fail(f"pkg-config --cflags {package} failed: {r.stderr.strip()}")
    return r.stdout.split()


def direct_includes(path):
    """The unconditional includes of a file, as spelled; those inside #if blocks are left out, so
    that a closure is never larger than what the compiler reads."""
    depth, found = 0, []
    for line in path.read_text(errors="replace").splitlines():
        if CONDITIONAL.match(line):
            depth += 1
        elif END_IF.match(line):
            depth -= 1
        elif depth == 0:
            m = INCLUDE.match(line)
            if m:
                found.append(m.group(1))
    return found


def dependency_files(flags, spelling, scratch):
    """The files a unit holding only `#include SPELLING` reads (g++ -M), resolved."""
    unit = scratch / (re.sub(r"[^A-Za-z0-9]", "_", spelling) + ".cpp")
    unit.write_text(f"#include {spelling}\n")
    r = run(["g++", "-M", *flags, str(unit)])
    if r.returncode:
        return None  # it does not even preprocess alone: no hub can rest on it
    words = r.stdout.replace("\\\n", " ").split()[1:]  # after "unit.o:"
    return {os.path.realpath(w) for w in words if w != str(unit)}


class Closures:
    """Include closures: blr headers from their text, third-party headers by g++ -M (once each)."""

    def __init__(self, include_dir, flags_of, scratch):
        self.include_dir, self.flags_of, self.scratch = include_dir, flags_of, scratch
        self.text_cache, self.third_party = {}, {}

    def is_blr(self, spelling):
        """A quoted include of an installed blr header (its closure is read from its text)."""
        return spelling.startswith('"') and (self.include_dir / spelling[1:-1]).is_file()

    def blr_closure(self, relative):
        if relative not in self.text_cache:
            self.text_cache[relative] = set()  # a cycle stops here
            found = set()
            for spelling in direct_includes(self.include_dir / relative):
                found.add(spelling)
                if self.is_blr(spelling):
                    found |= self.blr_closure(spelling[1:-1])
            self.text_cache[relative] = found
        return self.text_cache[relative]

    def files(self, kind, spelling):
        key = (kind, spelling)
        if key not in self.third_party:
            self.third_party[key] = dependency_files(self.flags_of[kind], spelling,
                                                     self.scratch / kind)
        return self.third_party[key]

    def resolved(self, kind, relative):
        """Every file the header's closure reads, as far as it is known without compiling it."""
        out = {os.path.realpath(self.include_dir / relative)}
        for spelling in self.blr_closure(relative):
            if self.is_blr(spelling):
                out.add(os.path.realpath(self.include_dir / spelling[1:-1]))
            else:
                out |= self.files(kind, spelling) or set()
        return out


def choose_hub(closures, kind, relative, hubs):
    mine = closures.resolved(kind, relative)
    for name, spellings in hubs:
        needed = set()
        for s in spellings:
            files = closures.files(kind, s)
            if files is None:
                break
            needed |= files
        else:
            if needed <= mine and os.path.realpath(closures.include_dir / relative) not in needed:
                return name
    return None


def compile_unit(flags, unit, hub_header):
    command = ["g++", "-fsyntax-only", "-w", *flags]  # errors are the question, not warnings
    if hub_header:
        command += ["-include", str(hub_header), "-Winvalid-pch"]
    r = run(command + [str(unit)])
    return r.returncode, r.stderr


def main():
    if len(sys.argv) < 2:
        fail("usage: headers_alone.py BUILD_DIR HAVE_TORCH(ON|OFF)")
    start = time.monotonic()
    build = pathlib.Path(sys.argv[1]).resolve()
    have_torch = len(sys.argv) > 2 and sys.argv[2] == "ON"
    work = build / "headers-alone"
    shutil.rmtree(work, ignore_errors=True)
    (work / "tu").mkdir(parents=True)
    (work / "hubs").mkdir()
    (work / "scratch" / "core").mkdir(parents=True)
    (work / "scratch" / "torch").mkdir()
    prefix = work / "prefix"
    with open(work / "install.log", "w") as log:
        if subprocess.run(["cmake", "--install", str(build), "--prefix", str(prefix)],
                          stdout=log, stderr=subprocess.STDOUT).returncode:
            fail(f"cmake --install failed (see {work / 'install.log'})")
    include = prefix / "include"
    if not (include / "blr" / "core").is_dir():
        fail(f"nothing installed under {include}")
    if (include / "blr" / "torch" / "checks").exists():
        fail("the checks' headers are installed")
    if (include / "blr" / "algorithms" / "table1.hpp").exists():
        fail("table1.hpp is installed")
    flags_of = {"core": pkg_config_flags(prefix, "blr")}
    if have_torch:
        flags_of["torch"] = pkg_config_flags(prefix, "blr-torch")
    hubs_of = {"core": CORE_HUBS, "torch": TORCH_HUBS + CORE_HUBS}

    headers = []
    for path in sorted((include / "blr").rglob("*.hpp")):
        relative = path.relative_to(include).as_posix()
        kind = "torch" if relative.startswith("blr/torch/") else "core"
        if kind == "torch" and not have_torch:
            continue
        headers.append((kind, relative))
    # The self-check's planted headers: each uses a name its closure lacks; one (core) includes
    # the rule hub's header, so it runs beside that hub.
    planted_dir = include / "blr" / "zz_planted"  # in the scratch install, after the list
    planted_dir.mkdir()
    (planted_dir / "core.hpp").write_text(
        '#pragma once\n#include "blr/rule/gaussian_rule.hpp"\n'
        "inline nlohmann::json zz_planted_core() { return {}; }  // <nlohmann/json.hpp> missing\n")
    planted = [("core", "blr/zz_planted/core.hpp")]
    if have_torch:
        (planted_dir / "torch.hpp").write_text(
            "#pragma once\n#include <ATen/Tensor.h>\n"
            "inline int zz_planted_torch(torch::nn::Module& m) { return 0; }"
            "  // <torch/nn/module.h> missing\n")
        planted.append(("torch", "blr/zz_planted/torch.hpp"))

    closures = Closures(include, flags_of, work / "scratch")
    jobs = os.cpu_count() or 2
    # Every third-party spelling a closure names, and every hub's, resolved by g++ -M in parallel.
    spellings = {(kind, s) for kind, relative in headers + planted
                 for s in closures.blr_closure(relative) if not closures.is_blr(s)}
    spellings |= {(kind, s) for kind in flags_of for _, hub in hubs_of[kind] for s in hub}
    spellings = sorted(spellings)
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        resolved = pool.map(lambda key: dependency_files(flags_of[key[0]], key[1],
                                                         work / "scratch" / key[0]), spellings)
        closures.third_party.update(zip(spellings, resolved))
    plan = []
    for kind, relative in headers + planted:
        hub = choose_hub(closures, kind, relative, hubs_of[kind])
        unit = work / "tu" / (relative.replace("/", "_").replace(".", "_") + ".cpp")
        unit.write_text(f'#include "{relative}"\n')
        plan.append((kind, relative, hub, unit))
    users = {}
    for kind, _, hub, _ in plan:
        if hub:
            users[(kind, hub)] = users.get((kind, hub), 0) + 1
    hub_spellings = dict(TORCH_HUBS + CORE_HUBS)
    built = {}
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        pending = {}
        for (kind, hub), count in sorted(users.items()):
            if count < MIN_USERS:
                continue
            header = work / "hubs" / f"{kind}-{hub}.hpp"
            header.write_text("".join(f"#include {s}\n" for s in hub_spellings[hub]))
            pending[pool.submit(run, ["g++", "-w", *flags_of[kind], "-x", "c++-header", str(header),
                                      "-o", f"{header}.gch"])] = (kind, hub, header)
        for future in concurrent.futures.as_completed(pending):
            kind, hub, header = pending[future]
            if future.result().returncode == 0:
                built[(kind, hub)] = header
            # else: the headers that would use it are compiled without it (and fail on their own)
        results = {}
        for kind, relative, hub, unit in plan:
            results[relative] = pool.submit(compile_unit, flags_of[kind], unit,
                                            built.get((kind, hub)))
        failed = []
        for kind, relative, hub, unit in plan:
            code, errors = results[relative].result()
            (unit.parent / (unit.name + ".err")).write_text(errors)
            is_planted = relative.startswith("blr/zz_planted/")
            if is_planted and code == 0:
                failed.append(f"the planted {relative} (using a name it does not include"
                              f"{', beside the hub ' + hub if hub else ''}) compiled: the check "
                              "cannot see a missing include")
            elif not is_planted and code != 0:
                failed.append(f"{relative} does not compile on its own"
                              f"{' (hub ' + hub + ')' if hub and (kind, hub) in built else ''}:\n"
                              + "\n".join(errors.splitlines()[:5]))
    for path in (work / "hubs").glob("*.gch"):
        path.unlink()  # a few hundred MB each
    if failed:
        for message in failed:
            print(f"FAIL: {message}", file=sys.stderr)
        fail("some installed headers do not compile on their own (above)")
    counts = {}
    for kind, _, hub, _ in plan[:len(headers)]:
        if (kind, hub) in built:
            counts[f"{kind} {hub}"] = counts.get(f"{kind} {hub}", 0) + 1
    planted_hubs = ", ".join(f"{r}: {h or 'no hub'}" for _, r, h, _ in plan[len(headers):])
    print(f"headers_alone: {len(headers)} installed headers compile on their own; from a hub: "
          f"{', '.join(f'{n} {k}' for k, n in sorted(counts.items()))}; "
          f"the planted headers fail ({planted_hubs}); {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
