"""On-disk cache of extracted corpus archives.

An archive is extracted once into ``$DPTOOLKIT_CACHE`` (or the user cache folder),
in a folder named after its SHA-256, atomically (temporary folder, then rename).
The first extraction prints one line to stderr with the folder and its size.
"""
import hashlib
import lzma
import os
import shutil
import sys
import tarfile
import tempfile
import zlib
from pathlib import Path


_ARCHIVE_SUFFIXES = (".tar.xz", ".txz", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar")


def _default_cache_dir():
    """``$DPTOOLKIT_CACHE``, else ``$XDG_CACHE_HOME/dptoolkit``, else ``~/.cache/dptoolkit``."""
    if os.environ.get("DPTOOLKIT_CACHE"):
        return Path(os.environ["DPTOOLKIT_CACHE"]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "dptoolkit"


def _file_sha256(path, chunk=1 << 22):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def _format_size(n_bytes):
    for unit in ("bytes", "kB", "MB", "GB"):
        if n_bytes < 1000 or unit == "GB":
            return f"{n_bytes:.0f} {unit}" if unit == "bytes" else f"{n_bytes:.1f} {unit}"
        n_bytes /= 1000


def _disk_usage(folder):
    """Bytes the files below ``folder`` take on disk (allocated blocks, as ``du``)."""
    total = 0
    for dirpath, _, filenames in os.walk(folder):
        for name in filenames:
            st = os.lstat(os.path.join(dirpath, name))
            total += getattr(st, "st_blocks", 0) * 512 or st.st_size
    return total


def _announce(path, target, n_bytes, n_disk):
    """The one line printed when an archive is extracted (never when it is reused)."""
    print(f"dptoolkit: extracted {path.name} ({_format_size(n_bytes)} of files, "
          f"{_format_size(n_disk)} on disk) to {target}; "
          "later loads reuse it (cache folder: cache_dir=, $DPTOOLKIT_CACHE or "
          "--cache-dir; delete it to free the space)", file=sys.stderr, flush=True)


# Errors of a truncated or corrupt compressed tar file (xz, gzip, bz2, tar itself).
_ARCHIVE_ERRORS = (EOFError, lzma.LZMAError, zlib.error, tarfile.TarError, OSError)


def _is_corrupt(exc):
    """A decompression or tar-format error (an OSError from the system, such as a
    full disk or a permission problem, carries an errno and is not one)."""
    return not isinstance(exc, OSError) or getattr(exc, "errno", None) is None


def _safe_members(tar, dest):
    """Members of ``tar`` that stay inside ``dest`` (fallback without tarfile filters)."""
    dest = os.path.realpath(dest)
    for member in tar.getmembers():
        target = os.path.realpath(os.path.join(dest, member.name))
        if not (member.isfile() or member.isdir()):
            continue  # links, devices and fifos are never needed for a corpus
        if os.path.commonpath([dest, target]) != dest:
            raise ValueError(f"unsafe path in archive: {member.name!r}")
        yield member


def _extract_archive(path, cache_dir):
    """Extract a tar archive once into ``cache_dir``; return the extracted folder.

    The folder is named after the archive and the first 16 hex digits of its
    SHA-256, so a changed archive is extracted again and the same archive
    copied elsewhere is not.  Extraction goes to a temporary folder that is
    renamed when complete, so an interrupted or concurrent extraction never
    leaves a half-written corpus behind.
    """
    cache_dir = Path(_default_cache_dir() if cache_dir is None else cache_dir).expanduser()
    stem = path.name
    for suffix in _ARCHIVE_SUFFIXES:
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    target = cache_dir / "corpora" / f"{stem}-{_file_sha256(path)[:16]}"
    if (target / ".complete").exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{stem}-", dir=target.parent))
    try:
        try:
            tar = tarfile.open(path, "r:*")
        except tarfile.ReadError as exc:
            raise ValueError(f"{path} is neither a folder nor a tar archive "
                             f"({', '.join(_ARCHIVE_SUFFIXES)}): {exc}") from exc
        except _ARCHIVE_ERRORS as exc:
            if not _is_corrupt(exc):
                raise
            raise ValueError(f"{path}: truncated or corrupt archive, cannot be opened "
                             f"({type(exc).__name__}: {exc})") from exc
        with tar:
            try:
                if hasattr(tarfile, "data_filter"):
                    # Rejects absolute paths, '..', links out of the tree, device files.
                    try:
                        tar.extractall(tmp, filter="data")
                    except tarfile.FilterError as exc:
                        raise ValueError(f"unsafe member in archive {path}: {exc}") from exc
                else:  # pragma: no cover - Python without tarfile filters (< 3.10.12)
                    tar.extractall(tmp, members=list(_safe_members(tar, tmp)))
            except _ARCHIVE_ERRORS as exc:
                if not _is_corrupt(exc):
                    raise
                raise ValueError(f"{path}: truncated or corrupt archive, extraction failed "
                                 f"({type(exc).__name__}: {exc})") from exc
            n_bytes = sum(m.size for m in tar.getmembers() if m.isfile())
        n_disk = _disk_usage(tmp)
        (tmp / ".complete").touch()
        try:
            os.replace(tmp, target)
        except OSError:
            # Another process finished first (target exists and is not empty).
            if not (target / ".complete").exists():
                shutil.rmtree(target, ignore_errors=True)
                os.replace(tmp, target)
            else:
                return target  # extracted (and announced) by the other process
        _announce(path, target, n_bytes, n_disk)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


# ---------------------------------------------------------------------------
# hashed features of an archive: one .npz per (archive content, loading options)
# ---------------------------------------------------------------------------

#: Bump when the stored layout or the featurisation changes.
_FEATURES_FORMAT = 1


def features_cache_path(archive, cache_dir, options):
    """Where the hashed features of ``archive`` loaded with ``options`` are cached.

    The name is a hash of the archive's content (SHA-256), the loading options, the
    scikit-learn version (its hashing vectoriser) and :data:`_FEATURES_FORMAT`, so a
    changed archive, option or featurisation never reads a stale matrix.
    """
    import json

    import sklearn

    cache_dir = Path(_default_cache_dir() if cache_dir is None else cache_dir).expanduser()
    key = json.dumps({"archive": _file_sha256(archive), "options": options,
                      "sklearn": sklearn.__version__, "format": _FEATURES_FORMAT},
                     sort_keys=True, default=repr)
    digest = hashlib.sha256(key.encode()).hexdigest()[:24]
    return cache_dir / "features" / f"{archive.name}-{digest}.npz"


def read_features(path):
    """``(X, y, target_names)`` from a file written by :func:`write_features`."""
    import numpy as np
    import scipy.sparse as sp

    with np.load(path, allow_pickle=False) as f:
        X = sp.csr_array((f["data"], f["indices"], f["indptr"]), shape=tuple(f["shape"]))
        return X, f["y"], [str(n) for n in f["target_names"]]


def write_features(path, X, y, target_names):
    """Store the hashed features atomically (a temporary file, then a rename).

    The first file written in a cache folder is announced on stderr (one line with
    the folder); later ones are silent.
    """
    import numpy as np

    first = not path.parent.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".npz", dir=path.parent)
    os.close(fd)
    try:
        np.savez(tmp, data=X.data, indices=X.indices, indptr=X.indptr,
                 shape=np.asarray(X.shape), y=np.asarray(y),
                 target_names=np.asarray(target_names, dtype=str))
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    if first:
        print(f"dptoolkit: hashed features are cached in {path.parent} "
              f"({_format_size(path.stat().st_size)} for this corpus part); later loads with "
              "the same options reuse them (delete the folder to free the space)",
              file=sys.stderr, flush=True)
