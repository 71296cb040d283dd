"""Reuters-21578 (Distribution 1.0): the SGML files ``reut2-NNN.sgm`` and the ModApte split.

Each ``<REUTERS ...>`` element carries the split attributes (``LEWISSPLIT``,
``TOPICS``), the topic codes (``<TOPICS><D>earn</D>...</TOPICS>``) and the text
(``<TEXT>`` with ``<TITLE>`` and ``<BODY>``, or unstructured for
``TYPE="UNPROC"``).  The ModApte split (Apte et al. 1994, as described in the
corpus README) is ``LEWISSPLIT="TRAIN"``/``"TEST"`` with ``TOPICS="YES"``:
9,603 training and 3,299 test documents; the "ApteMod" corpus keeps those with
at least one of the 90 topics that occur in both parts (7,770 / 3,019 here).
"""
import html
import re

__all__ = ["find_sgml_files", "read_reuters", "modapte"]

_DOC = re.compile(r"<REUTERS\b([^>]*)>(.*?)</REUTERS>", re.S)
_OPEN = re.compile(r"<REUTERS\b")
_ATTR = re.compile(r'([A-Za-z]+)="([^"]*)"')
_TOPICS = re.compile(r"<TOPICS>(.*?)</TOPICS>", re.S)
_D = re.compile(r"<D>(.*?)</D>", re.S)
_TEXT = re.compile(r"<TEXT\b[^>]*>(.*?)</TEXT>", re.S)
_TITLE = re.compile(r"<TITLE>(.*?)</TITLE>", re.S)
_BODY = re.compile(r"<BODY>(.*?)</BODY>", re.S)
_TAG = re.compile(r"<[^>]*>")


def find_sgml_files(folder):
    """The ``reut2-*.sgm`` files of ``folder``, sorted (empty list if none)."""
    return sorted(p for p in folder.glob("reut2-*.sgm") if p.is_file())


def _line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def _parse_file(path):
    raw = path.read_bytes()
    text = raw.decode("latin-1")
    docs = []
    end = 0
    for m in _DOC.finditer(text):
        # an opening tag between two documents that was never closed
        stray = _OPEN.search(text, end, m.start())
        if stray is not None:
            raise ValueError(f"{path}, line {_line_of(text, stray.start())}: <REUTERS> "
                             "element without </REUTERS>")
        end = m.end()
        attrs = dict(_ATTR.findall(m.group(1)))
        if "LEWISSPLIT" not in attrs or "TOPICS" not in attrs:
            raise ValueError(f"{path}, line {_line_of(text, m.start())}: <REUTERS> element "
                             "without the LEWISSPLIT and TOPICS attributes")
        inner = m.group(2)
        t = _TOPICS.search(inner)
        topics = [d.strip() for d in _D.findall(t.group(1))] if t else []
        body = _TEXT.search(inner)
        content = body.group(1) if body else ""
        title = _TITLE.search(content)
        main = _BODY.search(content)
        if title or main:
            parts = [title.group(1) if title else "", main.group(1) if main else ""]
            doc_text = "\n".join(parts)
        else:  # TYPE="UNPROC": the text is not split into title and body
            doc_text = _TAG.sub(" ", content)
        docs.append({"lewissplit": attrs["LEWISSPLIT"], "topics_attr": attrs["TOPICS"],
                     "newid": attrs.get("NEWID"), "topics": topics,
                     "text": html.unescape(doc_text)})
    stray = _OPEN.search(text, end)
    if stray is not None:
        raise ValueError(f"{path}, line {_line_of(text, stray.start())}: <REUTERS> element "
                         "without </REUTERS> (truncated file?)")
    if not docs:
        raise ValueError(f"{path}: no <REUTERS> documents (empty or not Reuters-21578 SGML)")
    return docs


def read_reuters(folder):
    """Every document of the ``reut2-*.sgm`` files of ``folder``, in file order."""
    docs = []
    for path in find_sgml_files(folder):
        docs.extend(_parse_file(path))
    return docs


def modapte(docs):
    """ModApte split of ``docs``: ``(train, test, topics)``.

    ``train``/``test`` are the documents with ``LEWISSPLIT="TRAIN"``/``"TEST"`` and
    ``TOPICS="YES"`` that have at least one topic of ``topics``, the sorted
    list of topics with at least one such training and one such test document
    (90 for the full corpus: the "ApteMod" version).
    """
    train = [d for d in docs if d["lewissplit"] == "TRAIN" and d["topics_attr"] == "YES"]
    test = [d for d in docs if d["lewissplit"] == "TEST" and d["topics_attr"] == "YES"]
    in_train = {t for d in train for t in d["topics"]}
    in_test = {t for d in test for t in d["topics"]}
    topics = sorted(in_train & in_test)
    keep = set(topics)
    train = [d for d in train if keep.intersection(d["topics"])]
    test = [d for d in test if keep.intersection(d["topics"])]
    return train, test, topics
