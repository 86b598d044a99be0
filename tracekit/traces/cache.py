"""A cache of what tracekit computed from each trace file, shared by every command that reads traces.

Decoding a trace's JSON is most of what ``analyze`` costs; ``whatif`` and ``report`` add their own work
on top. An investigation runs them again and again on the same files, so what was computed once is
kept here, keyed by what it was computed from, and read back instead of recomputed:

- ``columns``: each file's decoded columns (:func:`tracekit.traces.decode.decode_columns`: its
  :class:`~tracekit.traces.decode.Columns`, meta and the decoder's notes), whatever the decoder returns,
  for files of :data:`COLUMNS_MIN_BYTES` and more (stored by the commands that decode in this process or
  its parse workers; the engine path reads them but stores its batches' tables instead);
- the kinds the layers above store through :func:`load` / :func:`save` (a rank's tables, a what-if
  result, a report page), keyed with :func:`digest` of their inputs and :func:`code_key`.

**Entries.** One file per entry, ``<root>/v1/<kind>/<key>.tkc``: a table of buffers, a pickled header
(pickle protocol 5) and the buffers, each 64-byte aligned: every numpy array's bytes, which numpy hands
to pickle out of band, so the header holds only their dtype and shape (and the objects around them). On
read the file is memory-mapped copy-on-write (entries of :data:`MMAP_MIN_BYTES` and more; smaller ones are
read whole) and each array is a view of its bytes: nothing is parsed or copied but the header. One file
rather than an ``.npy`` per array: 16384 rank files would be 300,000 ``.npy`` files to open, and an entry
is written and renamed into place in one step.

**Keys.** A file's identity (:func:`file_key`): its resolved path, size, mtime and ctime (ns), inode and a
blake2b hash of its first and last :data:`HASH_BYTES`. ctime cannot be set back by a user (restoring the
mtime with ``touch -d`` or ``os.utime`` moves it), so an edited file is a new key whatever it kept; a
file replaced by another of the same name is a new inode and ctime. The decoder's version
(:func:`decoder_key`) is :data:`DECODER_VERSION` and a hash of the source of the decoder's modules
(:data:`DECODER_MODULES`: the decoder and the schema): any change to the decoder's code is a new key, so a
column added to the decoder is never read from an entry written without it, and an older tracekit's
entries are ignored.

**Writes** go to a temporary file in the entry's folder, renamed over the entry's name when complete
(atomic on POSIX): a reader sees a whole entry or none, and two processes writing the same entry leave
one of two identical files. A file that fails its checks on read is a miss.

**Where** (:func:`settings`): ``$TRACEKIT_CACHE`` (a folder; ``off`` disables), else
``$XDG_CACHE_HOME/tracekit``, else ``~/.cache/tracekit``; the commands' ``--cache-dir`` and ``--no-cache``
set the same variable (:func:`configure`), so forked and spawned workers follow. Never inside a trace
folder unless asked. **Size cap**: ``$TRACEKIT_CACHE_MAX_BYTES`` (default :data:`DEFAULT_MAX_BYTES`);
:func:`trim` removes the least recently used entries beyond it (each hit sets its entry's mtime: the
access time, whatever the file system's ``atime`` setting). A folder that cannot be created or written
(read-only, full) turns writing off for the process with one :class:`CacheWarning` (what it holds is
still read); it never fails a command.

numpy and the standard library only: parse workers import this before pandas.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import pickle
import struct
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from tracekit.traces import decode, schema

#: bump when what the decoder returns changes in a way its source hash would not show (a dependency's
#: behaviour); any edit to the modules of :data:`DECODER_MODULES` changes :func:`decoder_key` by itself
DECODER_VERSION = 1
ENV_DIR = "TRACEKIT_CACHE"
ENV_MAX_BYTES = "TRACEKIT_CACHE_MAX_BYTES"
#: values of ``$TRACEKIT_CACHE`` that turn the cache off
OFF_VALUES = frozenset({"off", "0", "no", "none", "false", "disabled"})
DEFAULT_MAX_BYTES = 2 << 30
#: bytes hashed at each end of a trace file for its identity: its header (ranks, process groups) and its last
#: events. Small on purpose: a 16384-rank run lists 16384 files before anything is read from the cache, and
#: the size, mtime, ctime and inode already tell a rewritten file (module doc)
HASH_BYTES = 4 << 10
#: trace files smaller than this (on disk) have no ``columns`` entry: decoding one costs about what reading
#: an entry does (~1 ms), and a run of many small ranks is cached by its rank tables and results instead
COLUMNS_MIN_BYTES = 1 << 20
#: entries from this size on are memory-mapped; smaller ones are read whole (a map holds a file descriptor)
MMAP_MIN_BYTES = 1 << 20
#: the entry layout's version: the folder the entries live in (``v1``)
LAYOUT = "v1"
_MAGIC = b"TKC2"
_HEAD = struct.Struct("<4sQQ")  # magic, header length, buffers
_ALIGN = 64
SUFFIX = ".tkc"
T = TypeVar("T")


class CacheWarning(UserWarning):
    """The cache cannot be used (its folder cannot be created or written): the command runs without it."""


@dataclass(frozen=True)
class Settings:
    """Where the cache is (``root``; None: off) and its size cap in bytes."""

    root: Path | None
    max_bytes: int


def default_root() -> Path:
    """``$XDG_CACHE_HOME/tracekit``, else ``~/.cache/tracekit``."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) / "tracekit" if xdg else Path.home() / ".cache" / "tracekit"


def settings() -> Settings:
    """The cache's settings from the environment (module doc), read on every call (one lookup per value of
    the variables: called for every file)."""
    env = os.environ
    tag = (env.get(ENV_DIR), env.get(ENV_MAX_BYTES), env.get("XDG_CACHE_HOME"), env.get("HOME"))
    got = _SETTINGS.get(tag)
    if got is None:
        got = _SETTINGS[tag] = _settings()
    return got


_SETTINGS: dict[tuple[Any, ...], Settings] = {}


def _settings() -> Settings:
    raw = os.environ.get(ENV_DIR)
    if raw is not None and raw.strip().lower() in OFF_VALUES:
        root = None
    else:
        root = Path(raw).expanduser() if raw else default_root()
    try:
        cap = int(os.environ.get(ENV_MAX_BYTES) or DEFAULT_MAX_BYTES)
    except ValueError:
        cap = DEFAULT_MAX_BYTES
    return Settings(root, max(0, cap))


def configure(*, cache_dir: str | os.PathLike[str] | None = None, enabled: bool = True,
              max_bytes: int | None = None) -> None:
    """Set the cache for this process and the workers it starts (the commands' ``--cache-dir``,
    ``--no-cache``, ``--cache-max-bytes``): through the environment variables of :func:`settings`."""
    global _off
    if not enabled:
        os.environ[ENV_DIR] = "off"
    elif cache_dir is not None:
        os.environ[ENV_DIR] = str(Path(cache_dir).expanduser().resolve())
    if max_bytes is not None:
        os.environ[ENV_MAX_BYTES] = str(int(max_bytes))
    _off = None
    _usable.clear()


#: why writing to the cache was turned off in this process (the one warning given), None while it is not;
#: what the cache holds is still read
_off: str | None = None
#: folders found writable in this process
_usable: set[Path] = set()


def _disable(root: Path, why: str) -> None:
    global _off
    if _off is None:
        _off = why
        warnings.warn(f"cache {root}: {why}; running without writing to the cache", CacheWarning, stacklevel=3)


def kind_dir(kind: str, root: Path | None = None) -> Path | None:
    """The folder of ``kind``'s entries, None when the cache is off."""
    root = root if root is not None else settings().root
    return None if root is None else root / LAYOUT / kind


def writable_root() -> Path | None:
    """The cache's root after making sure it can be written (created if missing); None, after one
    :class:`CacheWarning`, when it cannot: nothing is written to it for the rest of this process (what it
    holds is still read)."""
    root = settings().root
    if root is None or _off is not None:
        return None
    if root in _usable:
        return root
    try:
        (root / LAYOUT).mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".probe-", dir=root / LAYOUT)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        _disable(root, f"cannot write here ({e.strerror or e})")
        return None
    _usable.add(root)
    return root


# -- keys --------------------------------------------------------------------------------------

def file_key(path: str | os.PathLike[str]) -> str | None:
    """The identity of a file's contents as this module keys them (module doc); None when it cannot be read.

    16384 rank files are keyed before a cached run reads anything, and again by the workers that map them:
    a file's head and tail are hashed once per process (and its forks) for as long as a ``stat`` shows the
    same size, mtime, ctime and inode (any write moves the ctime), once it has been unchanged for
    :data:`_SETTLED_NS`."""
    folder, name = os.path.split(os.path.abspath(path))
    real = _REAL_DIRS.get(folder)
    if real is None:
        real = _REAL_DIRS[folder] = os.path.realpath(folder)
    full = os.path.join(real, name)
    try:
        st = os.stat(full)
    except OSError:
        return None
    ident = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)
    known = _KEYS.get(full)
    if known is not None and known[0] == ident:
        return known[1]
    try:
        fd = os.open(full, os.O_RDONLY)
        try:
            st = os.fstat(fd)
            head = os.pread(fd, HASH_BYTES, 0)
            tail = b""
            if st.st_size > HASH_BYTES:
                tail = os.pread(fd, HASH_BYTES, max(HASH_BYTES, st.st_size - HASH_BYTES))
        finally:
            os.close(fd)
    except OSError:
        return None
    ident = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)
    h = hashlib.blake2b(b"%s\0%d %d %d %d\0" % (os.fsencode(full), *ident[:4]), digest_size=20)
    h.update(head)
    h.update(tail)
    key = h.hexdigest()
    if time.time_ns() - st.st_ctime_ns > _SETTLED_NS:  # (a change within the clock's tick keeps the ctime)
        if len(_KEYS) >= _KEYS_MAX:
            _KEYS.clear()
        _KEYS[full] = (ident, key)
    return key


#: folder -> its resolved path, and resolved file path -> (its stat identity, its key), for :func:`file_key`
_REAL_DIRS: dict[str, str] = {}
_KEYS: dict[str, tuple[tuple[int, ...], str]] = {}
_KEYS_MAX = 1 << 20
#: a key is remembered only for a file unchanged this long (ns): the kernel stamps ctime from a clock that
#: moves in ticks of a few ms, so a file written twice within one tick could keep its stat identity (git's
#: "racily clean" entries are the same problem)
_SETTLED_NS = 2 * 10**9


_SOURCE_KEYS: dict[str, str] = {}


def source_key(package_dir: Path, *, suffixes: tuple[str, ...] | None = (".py",)) -> str:
    """A hash of every file under ``package_dir`` ending in ``suffixes`` (None: every file; names and bytes,
    ``__pycache__`` left out), once per process: the code an entry was computed with.

    Reading and hashing all of tracekit costs ~7 ms, listing and ``stat``-ing its files ~1 ms: the hash is
    kept in the cache (kind ``source``) under the files' stat identities (size, mtime, ctime, inode, as
    :func:`file_key`: any write moves the ctime) and read from there while no file changed. Files changed
    within :data:`_SETTLED_NS` are hashed every time."""
    tag = f"{package_dir}|{suffixes}"
    if tag in _SOURCE_KEYS:
        return _SOURCE_KEYS[tag]
    files: list[tuple[str, str]] = []
    for root, dirs, names in os.walk(package_dir):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        files += [(os.path.relpath(os.path.join(root, f), package_dir), os.path.join(root, f))
                  for f in sorted(names) if suffixes is None or f.endswith(suffixes)]
    stats = [(rel, _stat_identity(p)) for rel, p in files]
    now = time.time_ns()
    settled = all(st is not None and now - st[2] > _SETTLED_NS for _, st in stats)
    memo_key = digest(SOURCE_KIND, str(package_dir), suffixes, stats) if settled else None
    known = load(SOURCE_KIND, memo_key) if memo_key is not None else None
    if not isinstance(known, str):
        h = hashlib.blake2b(digest_size=20)
        for rel, p in files:
            h.update(rel.encode() + b"\0")
            try:
                h.update(Path(p).read_bytes())
            except OSError:
                h.update(b"?")
        known = h.hexdigest()
        if memo_key is not None:
            save(SOURCE_KIND, memo_key, known)
    _SOURCE_KEYS[tag] = known
    return known


#: the cache kind of :func:`source_key`'s hashes
SOURCE_KIND = "source"


def _stat_identity(path: str) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


#: the modules whose code makes the decoder's output (files of :mod:`tracekit.traces`): their source is part
#: of :func:`decoder_key`. ``tests/traces/test_cache.py`` fails when the decoder imports a module of the package
#: that is not listed here, so a column added through a new module cannot be forgotten
DECODER_MODULES = ("decode.py", "schema.py")


def decoder_key() -> str:
    """:data:`DECODER_VERSION`, the event columns and the source of :data:`DECODER_MODULES` (module doc)."""
    if "decoder" not in _SOURCE_KEYS:
        folder = Path(decode.__file__).parent
        h = hashlib.blake2b(digest_size=20)
        for name in DECODER_MODULES:
            h.update(name.encode() + b"\0" + (folder / name).read_bytes())
        _SOURCE_KEYS["decoder"] = h.hexdigest()
    return digest(DECODER_VERSION, schema.EVENT_COLUMNS, _SOURCE_KEYS["decoder"])


def code_key() -> str:
    """Every file of the tracekit package (code and data, e.g. the bundled plotly.js), numpy's version and
    Python's: what a rank's tables or a command's result were computed with."""
    package = Path(__file__).resolve().parent.parent
    return digest(source_key(package, suffixes=None), np.__version__, sys.version_info[:2])


_VERSIONS: dict[str, str | None] = {}


def package_versions(names: tuple[str, ...]) -> tuple[tuple[str, str | None], ...]:
    """The installed versions of ``names`` (None: not installed), once per process: a result rendered by
    pandas or plotly is keyed by their versions too."""
    from importlib import metadata  # ~10 ms: only the commands that cache a whole result need it

    for n in names:
        if n not in _VERSIONS:
            try:
                _VERSIONS[n] = metadata.version(n)
            except metadata.PackageNotFoundError:
                _VERSIONS[n] = None
    return tuple((n, _VERSIONS[n]) for n in names)


def digest(*parts: Any) -> str:
    """A hex key of ``parts`` (pickled: equal values give equal keys within one Python and tracekit)."""
    return hashlib.blake2b(pickle.dumps(parts, protocol=5), digest_size=20).hexdigest()


# -- entries -----------------------------------------------------------------------------------

def entry_path(kind: str, key: str, root: Path | None = None) -> Path | None:
    d = kind_dir(kind, root)
    return None if d is None else d / f"{key}{SUFFIX}"


def _aligned(n: int) -> int:
    return -(-n // _ALIGN) * _ALIGN


def _encode(obj: Any) -> list[Any] | None:
    """The pieces of an entry file (module doc): its fixed head, the buffers' table, the pickled header and
    the buffers (numpy's out-of-band pickle buffers, protocol 5), each at a 64-byte aligned offset."""
    buffers: list[pickle.PickleBuffer] = []
    try:
        header = pickle.dumps(obj, protocol=5, buffer_callback=buffers.append)
    except Exception:  # noqa: BLE001 - whatever pickle refuses is not cached, never an error
        return None
    raws = [b.raw() for b in buffers]
    table_bytes = 16 * len(raws)
    pos = _aligned(_HEAD.size + table_bytes + len(header))
    offsets = []
    for r in raws:
        offsets.append(pos)
        pos = _aligned(pos + r.nbytes)
    table = struct.pack(f"<{2 * len(raws)}Q", *(x for o, r in zip(offsets, raws) for x in (o, r.nbytes)))
    pieces: list[Any] = [_HEAD.pack(_MAGIC, len(header), len(raws)), table, header]
    end = _HEAD.size + table_bytes + len(header)
    for o, r in zip(offsets, raws):
        pieces += [bytes(o - end), r]
        end = o + r.nbytes
    pieces.append(bytes(pos - end))
    return pieces


def save(kind: str, key: str, obj: Any) -> bool:
    """Store ``obj`` (picklable; numpy arrays in it keep their bytes out of the pickle, to be mapped back) as
    entry ``key`` of ``kind``. False, never an exception, when it is not stored (cache off or not writable, an
    object pickle refuses, an entry larger than the cap)."""
    root = writable_root()
    if root is None:
        return False
    pieces = _encode(obj)
    if pieces is None or sum(len(memoryview(p)) for p in pieces) > settings().max_bytes:
        return False
    target = entry_path(kind, key, root)
    assert target is not None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{key[:16]}-", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.writelines(pieces)
            os.replace(tmp, target)
        except BaseException:
            _unlink(tmp)
            raise
    except OSError as e:
        _disable(root, f"cannot write an entry ({e.strerror or e})")
        return False
    return True


def _decode(fh: Any) -> Any:
    """The object of an open entry file (module doc); raises on anything that is not a whole entry."""
    size = os.fstat(fh.fileno()).st_size
    magic, n_header, n_buffers = _HEAD.unpack(fh.read(_HEAD.size))
    table_bytes = 16 * n_buffers
    if magic != _MAGIC or _HEAD.size + table_bytes + n_header > size:
        raise ValueError("not a whole entry")
    table = struct.unpack(f"<{2 * n_buffers}Q", fh.read(table_bytes))
    header = fh.read(n_header)
    if n_buffers and table[-2] + table[-1] > size:
        raise ValueError("not a whole entry")
    if not n_buffers:
        return pickle.loads(header)
    if size >= MMAP_MIN_BYTES:
        data = memoryview(mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY))
    else:
        fh.seek(0)
        data = memoryview(bytearray(fh.read()))
    return pickle.loads(header, buffers=[data[table[i]:table[i] + table[i + 1]] for i in range(0, len(table), 2)])


def load(kind: str, key: str) -> Any | None:
    """Entry ``key`` of ``kind``, None when there is none (or the cache is off, or the entry is damaged).
    A hit marks the entry as used now (its mtime, for :func:`trim`)."""
    path = entry_path(kind, key)
    if path is None:
        return None
    try:
        with open(path, "rb") as fh:
            obj = _decode(fh)
    except FileNotFoundError:
        return None
    except Exception:  # noqa: BLE001 - damaged, or from another layout or code: a miss (written anew)
        return None
    try:
        os.utime(path)
    except OSError:
        pass  # a read-only cache still serves
    return obj


# -- decoded columns -----------------------------------------------------------------------------

def cached_columns(path: str | os.PathLike[str]) -> tuple[str | None, tuple[dict[str, Any], decode.Columns] | None]:
    """``(file key, (meta, columns))`` of a trace file from the cache, or ``(file key, None)`` on a miss (the
    file key: :func:`file_key`, None when the cache is off or the file cannot be read)."""
    if settings().root is None:
        return None, None
    fk = file_key(path)
    if fk is None:
        return None, None
    hit = load("columns", _columns_entry(fk))
    ok = isinstance(hit, tuple) and len(hit) == 2 and isinstance(hit[1], decode.Columns)
    return fk, (hit if ok else None)


def _worth_caching(path: Path) -> bool:
    try:
        return os.stat(path).st_size >= COLUMNS_MIN_BYTES
    except OSError:
        return False


def _columns_entry(fk: str) -> str:
    return digest("columns", fk, decoder_key())


def decode_columns(path: Path, *, store: bool = True) -> tuple[dict[str, Any], decode.Columns, str | None]:
    """:func:`tracekit.traces.decode.decode_columns` through the cache: ``(meta, columns, file key)``. On a
    miss the file is decoded and, with ``store``, stored, unless it changed while being decoded (its identity
    is taken again after). Input errors raise as from the decoder (they are not cached)."""
    meta, cols, fk, _ = decode_columns_held(path, store=store)
    return meta, cols, fk


def decode_columns_held(path: Path, *,
                        store: bool = True) -> tuple[dict[str, Any], decode.Columns, str | None, bool]:
    """:func:`decode_columns` and whether the cache holds these columns now (read from it, or stored: then
    :func:`cached_columns` maps them)."""
    fk, hit = cached_columns(path)
    if hit is not None:
        return hit[0], hit[1], fk, True
    meta, cols = decode.decode_columns(path)
    held = (store and fk is not None and _worth_caching(path) and file_key(path) == fk
            and save("columns", _columns_entry(fk), (meta, cols)))
    return meta, cols, fk, held


# -- upkeep ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Entry:
    path: Path
    kind: str
    bytes: int
    used_ns: int


def entries(root: Path | None = None) -> Iterator[Entry]:
    """Every entry of the cache (none when it is off or missing); temporary files left by a killed writer too
    (kind ``partial``), so that :func:`trim` and :func:`clear` remove them."""
    base = kind_dir("", root)
    if base is None:
        return
    try:
        kinds = list(os.scandir(base))
    except OSError:
        return
    for k in kinds:
        if not k.is_dir(follow_symlinks=False):
            continue
        try:
            files = list(os.scandir(k.path))
        except OSError:
            continue
        for f in files:
            if not f.name.endswith((SUFFIX, ".tmp")):
                continue
            try:
                st = f.stat(follow_symlinks=False)
            except OSError:
                continue
            yield Entry(Path(f.path), k.name if f.name.endswith(SUFFIX) else "partial", st.st_size, st.st_mtime_ns)


#: a temporary file older than this (ns) belongs to a writer that died: :func:`trim` removes it
_STALE_TMP_NS = 3600 * 10**9


def trim(max_bytes: int | None = None) -> int:
    """Remove the least recently used entries until the cache holds at most ``max_bytes`` (default: the
    cap of :func:`settings`). Returns the bytes removed. Never raises."""
    s = settings()
    if s.root is None or not s.root.exists():
        return 0
    cap = s.max_bytes if max_bytes is None else max_bytes
    now = time.time_ns()
    found = []
    removed = 0
    for e in entries(s.root):
        if e.kind == "partial":
            if now - e.used_ns > _STALE_TMP_NS and _unlink(e.path):
                removed += e.bytes
            continue
        found.append(e)
    total = sum(e.bytes for e in found)
    for e in sorted(found, key=lambda e: e.used_ns):
        if total <= cap:
            break
        if _unlink(e.path):
            total -= e.bytes
            removed += e.bytes
    return removed


def clear() -> tuple[int, int]:
    """Remove every entry; ``(entries, bytes)`` removed."""
    n = size = 0
    for e in entries():
        if _unlink(e.path):
            n += 1
            size += e.bytes
    return n, size


def info() -> dict[str, Any]:
    """What ``tracekit cache info`` prints: where, whether on, the cap, and entries and bytes per kind."""
    s = settings()
    kinds: dict[str, dict[str, int]] = {}
    for e in entries(s.root):
        k = kinds.setdefault(e.kind, {"entries": 0, "bytes": 0})
        k["entries"] += 1
        k["bytes"] += e.bytes
    return {"location": None if s.root is None else str(s.root), "enabled": s.root is not None,
            "max_bytes": s.max_bytes,
            "entries": sum(k["entries"] for k in kinds.values()), "bytes": sum(k["bytes"] for k in kinds.values()),
            "kinds": dict(sorted(kinds.items()))}


def _unlink(path: str | os.PathLike[str]) -> bool:
    try:
        os.unlink(path)
        return True
    except OSError:
        return False


def memo_lookup(kind: str, key: str | None) -> tuple[Any, list[tuple[str, type[Warning]]]] | None:
    """``(value, warnings)`` of a :func:`memo` entry (the warnings its computation raised, not raised here), None
    on a miss (``key`` None: never cached)."""
    hit = load(kind, key) if key is not None else None
    if not (isinstance(hit, tuple) and len(hit) == 2 and hit[0] == "memo"):
        return None
    value, caught = hit[1]
    return value, caught


def memo_caught(kind: str, key: str | None, compute: Callable[[], T], *,
                trim_after: bool = True) -> tuple[T, list[tuple[str, type[Warning]]]]:
    """``(value, warnings)``: :func:`memo`'s value and the warnings ``compute`` raised (read with the entry on a
    hit), which are not raised here: for a caller that raises them elsewhere (a forked child's go back to its
    parent). ``key`` None: computed, not stored."""
    hit = memo_lookup(kind, key)
    return hit if hit is not None else _computed(kind, key, compute, trim_after)


def _computed(kind: str, key: str | None, compute: Callable[[], T],
              trim_after: bool) -> tuple[T, list[tuple[str, type[Warning]]]]:
    """``(compute(), the warnings it raised)``, stored as entry ``key`` of ``kind`` (None: not stored)."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        value = compute()
    caught = [(str(w.message), w.category) for w in rec]
    if key is not None and save(kind, key, ("memo", (value, caught))) and trim_after:
        trim()
    return value, caught


def memo(kind: str, key: str | None, compute: Callable[[], T], *, trim_after: bool = True) -> T:
    """``compute()`` through entry ``key`` of ``kind`` (``key`` None: not cached). The warnings ``compute``
    raised are stored with its value and raised again on a hit, so a cached command says what it said. A
    stored value may take the cache past its cap: :func:`trim` follows (it lists the cache: a caller storing
    one entry per rank passes ``trim_after=False`` and trims once when all are stored)."""
    if key is None:
        return compute()
    value, caught = memo_caught(kind, key, compute, trim_after=trim_after)
    rewarn(caught)
    return value


def result(kind: str, inputs: list[str | None], parts: tuple[Any, ...], compute: Callable[[], T], *,
           packages: tuple[str, ...] = (), on_hit: Callable[[], None] | None = None) -> T:
    """A command's whole result through the cache (:func:`memo`): the entry of ``kind`` keyed by ``inputs``
    (the identity of what it reads, one per run: :func:`tracekit.traces.loader.inputs_key`; any None: not
    cached), ``parts`` (the options that change the result), :func:`code_key` and the installed versions of
    ``packages`` (those that shape the result: pandas, plotly). ``on_hit`` is called when the entry is read."""
    key = None if None in inputs else digest(kind, list(inputs), parts, code_key(),
                                                 package_versions(packages) if packages else ())
    hit = memo_lookup(kind, key)
    if hit is not None:
        if on_hit is not None:
            on_hit()
        rewarn(hit[1])
        return hit[0]
    if key is None:
        return compute()
    value, caught = _computed(kind, key, compute, True)  # (looked up once: a miss is not looked up again)
    rewarn(caught)
    return value


def rewarn(caught: list[tuple[str, type[Warning]]], stacklevel: int = 4) -> None:
    """Raise again the ``(message, category)`` warnings a computation raised elsewhere (read from an entry,
    or recorded in another process)."""
    for message, category in caught:
        warnings.warn(message, category, stacklevel=stacklevel)
