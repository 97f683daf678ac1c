#!/usr/bin/env python3
"""What installing blr's Debian packages costs on a fresh machine, per scripts/setup.sh profile.

For each profile (demo, all) the dependency closure of its packages (Depends and Pre-Depends,
recursively, as apt-cache resolves them) less the packages of priority required or important
(what a minimal Debian image already has), with the sum of their download sizes and installed
sizes from the package index. With --unpack DIR it also downloads the .deb files of the packages
only `all` needs into DIR (apt-get download) and times unpacking them (dpkg -x) and byte-compiling
their Python modules (python3 -m compileall), the two costs of installing them that grow with
their size; dpkg's own bookkeeping and maintainer scripts are not included.

Usage: scripts/package_footprint.py [--unpack DIR]   (docs/benchmarks.md, "Build time")
"""
import pathlib
import re
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent


def run(args):
    return subprocess.run(args, capture_output=True, text=True, check=True).stdout


def profile(name):
    return run(["bash", str(HERE / "setup.sh"), name, "--list"]).split()


def closure(packages):
    out = run(["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests",
               "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances"] + packages)
    return {line.strip() for line in out.splitlines()
            if line and not line.startswith((" ", "<"))}


def base_image():
    out = run(["dpkg-query", "-W", "-f=${Package} ${Priority}\n"])
    return {line.split()[0].split(":")[0] for line in out.splitlines()
            if len(line.split()) == 2 and line.split()[1] in ("required", "important")}


def sizes(packages):
    out = run(["apt-cache", "show", "--no-all-versions"] + sorted(packages))
    installed = sum(int(v) for v in re.findall(r"^Installed-Size: (\d+)", out, re.M))
    download = sum(int(v) for v in re.findall(r"^Size: (\d+)", out, re.M))
    return installed / 1024, download / 1e6


def timed(args, cwd=None):
    start = time.monotonic()
    subprocess.run(args, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - start


def main(argv):
    if argv and not (len(argv) == 2 and argv[0] == "--unpack"):
        sys.exit(__doc__)
    base = base_image()
    sets = {name: closure(profile(name)) - base for name in ("demo", "all")}
    for name, packages in sets.items():
        installed, download = sizes(packages)
        print(f"{name}: {len(packages)} packages beyond the minimal image, "
              f"{download:.0f} MB to download, {installed:.0f} MiB installed")
    extra = sets["all"] - sets["demo"]
    installed, download = sizes(extra)
    print(f"only in all: {len(extra)} packages, {download:.0f} MB, {installed:.0f} MiB")
    if argv:
        folder = pathlib.Path(argv[1])
        (folder / "debs").mkdir(parents=True, exist_ok=True)
        (folder / "root").mkdir(exist_ok=True)
        seconds = timed(["apt-get", "download", "-q"] + sorted(extra), cwd=folder / "debs")
        print(f"download of those: {seconds:.1f} s")
        debs = sorted((folder / "debs").glob("*.deb"))
        start = time.monotonic()
        for deb in debs:
            subprocess.run(["dpkg", "-x", str(deb), str(folder / "root")], check=True)
        print(f"dpkg -x of their {len(debs)} files: {time.monotonic() - start:.1f} s")
        seconds = timed([sys.executable, "-m", "compileall", "-q", "-j", "0",
                         str(folder / "root/usr/lib/python3/dist-packages")])
        print(f"compileall of their Python modules: {seconds:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
