"""Where a text corpus keeps its documents: class folders, a train/test split of its
own, a ``label<TAB>text`` file or Reuters-21578's SGML files, found in a folder or an
extracted ``.tar.xz`` (the layout :func:`~dptoolkit.datasets.load_text_corpus` reads).
"""
from dataclasses import dataclass, field
from pathlib import Path

from . import _reuters
from ._cache import _ARCHIVE_SUFFIXES, _extract_archive
from ._paths import _check_path_like

__all__ = ["is_tsv_corpus", "corpus_has_own_split", "corpus_labels_from_examples"]


_TSV_NAMES = ("SMSSpamCollection",)


@dataclass
class _Layout:
    """A corpus found on disk."""

    name: str
    root: Path
    own_split: bool
    splits: dict = field(default_factory=dict)  # own-split folder layouts
    allowed: list = None                        # class folders to read (None: all)
    parts: list = field(default_factory=list)   # folders of class folders (no split)
    file: Path = None                           # label<TAB>text file


def is_tsv_corpus(path):
    """Whether ``path`` is a ``label<TAB>text`` corpus file (e.g. ``SMSSpamCollection``
    or a ``.tsv`` file) that :func:`load_text_corpus` reads.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    bool
        False for a missing path or a folder.

    Raises
    ------
    TypeError
        If ``path`` is not a str or path-like.
    """
    path = Path(_check_path_like(path, "path"))
    return path.is_file() and (path.name in _TSV_NAMES or path.name.endswith(".tsv"))


_is_tsv_file = is_tsv_corpus


def _find_layout(root):
    """Identify the corpus layout at ``root`` (a folder, or a label<TAB>text file)."""
    if root.is_file():
        return _Layout("label-tab-text", root, False, file=root)
    candidates = [root] + sorted(p for p in root.iterdir() if p.is_dir())
    for base in candidates:
        # IMDB (Maas et al. 2011): aclImdb/{train,test}/{neg,pos}; train/unsup and
        # the *.feat / urls files are ignored.
        imdb = base / "aclImdb" if (base / "aclImdb").is_dir() else base
        if (imdb / "train" / "pos").is_dir() or (imdb / "test" / "pos").is_dir():
            splits = {s: imdb / s for s in ("train", "test") if (imdb / s).is_dir()}
            return _Layout("aclImdb", root, True, splits, ["neg", "pos"])
        # 20 Newsgroups "bydate": 20news-bydate-{train,test}/<group>/<id>.
        news = {s: base / f"20news-bydate-{s}" for s in ("train", "test")}
        if any(p.is_dir() for p in news.values()):
            return _Layout("20news-bydate", root, True,
                           {s: p for s, p in news.items() if p.is_dir()})
        # Movie review polarity v2.0 (Pang & Lee 2004): txt_sentoken/{neg,pos}.
        if (base / "txt_sentoken" / "pos").is_dir():
            return _Layout("txt_sentoken", root, False, allowed=["neg", "pos"],
                           parts=[base / "txt_sentoken"])
        # Reuters-21578: reut2-000.sgm ... reut2-021.sgm.
        if _reuters.find_sgml_files(base):
            return _Layout("reuters21578", base, True)
        # Enron-Spam (Metsis et al. 2006): enron<k>/{ham,spam}, or one such folder.
        if (base / "ham").is_dir() or (base / "spam").is_dir():
            return _Layout("enron-spam", base, False, allowed=["ham", "spam"], parts=[base])
        enron = sorted(p for p in base.glob("enron*")
                       if (p / "ham").is_dir() or (p / "spam").is_dir())
        if enron:
            return _Layout("enron-spam", base, False, allowed=["ham", "spam"], parts=enron)
        # label<TAB>text: SMSSpamCollection, or a single *.tsv file.
        tsv = [base / n for n in _TSV_NAMES if (base / n).is_file()] or \
            sorted(p for p in base.glob("*.tsv") if p.is_file())
        if len(tsv) == 1 or (tsv and tsv[0].name in _TSV_NAMES):
            return _Layout("label-tab-text", base, False, file=tsv[0])
    raise ValueError(
        f"unknown corpus layout in {root}: expected aclImdb/{{train,test}}/{{neg,pos}}, "
        "20news-bydate-{train,test}/<group>/, txt_sentoken/{neg,pos}, reut2-*.sgm, "
        "enron<k>/{ham,spam} or a label<TAB>text file (SMSSpamCollection, *.tsv)"
    )


def _resolve(path, cache_dir):
    """The corpus folder (or file) at ``path``, extracting an archive into the cache."""
    path = Path(path).expanduser()
    if not path.exists():
        raise FileNotFoundError(f"no corpus at {path}")
    if path.is_dir() or _is_tsv_file(path):
        return path
    if path.name.endswith(_ARCHIVE_SUFFIXES):
        return _extract_archive(path, cache_dir)
    raise ValueError(f"{path} is neither a folder nor a tar archive "
                     f"({', '.join(_ARCHIVE_SUFFIXES)}) nor a label<TAB>text file "
                     f"({', '.join(_TSV_NAMES)}, *.tsv)")


def corpus_has_own_split(path, cache_dir=None):
    """Whether the text corpus at ``path`` has its own train/test split.

    Parameters
    ----------
    path : str or path-like
        A corpus folder, archive or ``label<TAB>text`` file (as for
        :func:`load_text_corpus`).
    cache_dir : str or path-like, optional

    Returns
    -------
    bool
        True for IMDB, 20 Newsgroups and Reuters-21578 (ModApte); False for the
        corpora whose ``subset="train"/"test"`` is the seeded stratified split.
    """
    return _find_layout(_resolve(path, cache_dir)).own_split


_has_own_split = corpus_has_own_split


def corpus_labels_from_examples(path, cache_dir=None):
    """Whether the corpus's default label set is read from its examples' labels.

    A folder-per-class corpus (IMDB, 20 Newsgroups, Enron-spam, review
    polarity) names its classes by its folders.  A ``label<TAB>text`` file has
    the labels its lines carry, and the multiclass Reuters-21578 task takes the
    most frequent ModApte training topics: without ``positive``/``negative``,
    one added example can change these label sets, so a private fit that uses
    them has a label set outside its guarantee (declare the task with
    ``positive``/``negative`` to make it public).

    Parameters
    ----------
    path : str or path-like
        As for :func:`load_text_corpus`.
    cache_dir : str or path-like, optional

    Returns
    -------
    bool
        True for ``label<TAB>text`` files and Reuters-21578.
    """
    return _find_layout(_resolve(path, cache_dir)).name in ("label-tab-text",
                                                            "reuters21578")
