# Sequential manifest-v3 tree digest, written for `make bench` only: it is
# how the upstream tools work (one Python process, one file at a time) and a
# third opinion on the digest bytes. Usage: python3 reference.py ROOT
import hashlib
import json
import os
import stat
import subprocess
import sys

TOP = [".git", ".loki", ".next", ".nuxt", "target"]
ANY = [".git", ".mypy_cache", ".pytest_cache", ".venv", "__pycache__", "node_modules", "venv"]


def git(root, *args):
    return subprocess.run(["git", "-C", root, *args], capture_output=True)


def is_top(root):
    out = git(root, "rev-parse", "--show-toplevel")
    if out.returncode != 0:
        return False
    top = os.fsdecode(out.stdout.rstrip(b"\n"))
    return os.path.realpath(top) == os.path.realpath(root)


def index_of(root):
    idx = {}
    for rec in git(root, "ls-files", "--stage", "-z").stdout.split(b"\0"):
        if rec:
            meta, path = rec.split(b"\t", 1)
            mode, oid, stage = meta.decode().split(" ")
            idx.setdefault(os.fsdecode(path), []).append((mode, oid, int(stage)))
    return idx


def walked(root, links):
    for top, dirs, files in os.walk(root):
        rel = os.path.relpath(top, root)
        rel = "" if rel == "." else rel + "/"
        keep = []
        for d in dirs:
            if os.path.islink(os.path.join(top, d)):
                files.append(d)
            elif not (rel == "" and d in TOP) and d not in ANY and rel + d not in links:
                keep.append(d)
        dirs[:] = keep
        for f in files:
            yield rel + f


def through_link(root, path):
    parts = path.split("/")[:-1]
    for i in range(len(parts)):
        p = os.path.join(root, *parts[: i + 1])
        if os.path.islink(p) or not os.path.isdir(p):
            return True
    return False


def entry(root, path, idx):
    full = os.path.join(root, path)
    if any(m == "160000" for m, _, _ in idx.get(path, [])):
        sub = full if os.path.isdir(full) and not os.path.islink(full) else None
        ok = sub is not None and is_top(sub)
        head = git(sub, "rev-parse", "--verify", "-q", "HEAD") if ok else None
        return {"path": path, "kind": "gitlink",
                "index": [{"stage": s, "oid": o} for _, o, s in sorted(idx[path], key=lambda e: (e[2], e[1]))],
                "head_oid": head.stdout.decode().strip() if ok and head.returncode == 0 else "",
                "worktree_sha256": digest(sub) if ok else ""}
    if through_link(root, path):
        return {"path": path, "kind": "missing"}
    try:
        st = os.lstat(full)
    except FileNotFoundError:
        return {"path": path, "kind": "missing"}
    except OSError:
        return {"path": path, "kind": "unreadable"}
    x = bool(st.st_mode & 0o111)
    if stat.S_ISDIR(st.st_mode):
        return {"path": path, "kind": "missing"}
    if stat.S_ISLNK(st.st_mode):
        target = os.fsencode(os.readlink(full))
        return {"path": path, "kind": "symlink", "executable": x, "size": len(target),
                "sha256": hashlib.sha256(target).hexdigest()}
    if stat.S_ISREG(st.st_mode):
        h, n = hashlib.sha256(), 0
        try:
            with open(full, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 18), b""):
                    h.update(chunk)
                    n += len(chunk)
        except OSError:
            return {"path": path, "kind": "unreadable"}
        return {"path": path, "kind": "file", "executable": x, "size": n, "sha256": h.hexdigest()}
    return {"path": path, "kind": "other", "executable": x, "size": st.st_size}


def digest(root):
    if not is_top(root):
        return ""
    idx = index_of(root)
    links = {p for p, es in idx.items() if any(m == "160000" for m, _, _ in es)}
    paths = set(idx) | set(walked(root, links))
    paths = sorted(p for p in paths if p.split("/")[0] not in (".git", ".loki"))
    manifest = {"version": 3, "filesystem_walk_excluded_top_level_directories": TOP,
                "excluded_walk_directories": ANY, "entries": [entry(root, p, idx) for p in paths]}
    blob = json.dumps(manifest, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


print(digest(sys.argv[1]))
