"""A lab's BM25 system for configs/lab.yaml (irbench run executes it once per collection):
reads TREC topics and a gzip TREC SGML collection, ranks each topic's title with bm25s
(https://github.com/xhluca/bm25s) and writes a TREC run of the top 100 documents per topic.

    python bm25_run.py --topics topics.txt --documents documents.sgml.gz --out run.txt --tag bm25
"""

import argparse
import gzip
import re

try:
    import bm25s
except ImportError:
    raise SystemExit("bm25_run.py needs bm25s: pip install 'irbench[lab]'") from None

DOC = re.compile(r"<DOC>(.*?)</DOC>", re.S)
DOCNO = re.compile(r"<DOCNO>\s*(\S+?)\s*</DOCNO>")
TOPIC = re.compile(r"<top>(.*?)</top>", re.S)
NUM = re.compile(r"<num>\s*(?:Number:)?\s*(\S+)")
TITLE = re.compile(r"<title>(.*?)(?=<desc>|<narr>|$)", re.S)
TAG = re.compile(r"<[^>]*>")


def documents(path: str) -> tuple[list[str], list[str]]:
    """(docnos, texts) of a TREC SGML file, gzip-compressed or not."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    docnos, texts = [], []
    for body in DOC.findall(data.decode("utf-8", "replace")):
        found = DOCNO.search(body)
        if found:
            docnos.append(found.group(1))
            texts.append(" ".join(TAG.sub(" ", body[found.end():]).split()))
    return docnos, texts


def topics(path: str) -> list[tuple[str, str]]:
    """(topic id, title) of each topic of a TREC topics file."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    found = []
    for block in TOPIC.findall(text):
        num, title = NUM.search(block), TITLE.search(block)
        if num and title:
            found.append((num.group(1), " ".join(title.group(1).split())))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topics", required=True)
    parser.add_argument("--documents", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--tag", default="bm25")
    args = parser.parse_args()
    docnos, texts = documents(args.documents)
    queries = topics(args.topics)
    if not docnos or not queries:
        raise SystemExit(f"no documents in {args.documents} or no topics in {args.topics}")
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False),
                    show_progress=False)
    asked = bm25s.tokenize([title for _, title in queries], stopwords="en", return_ids=False,
                           show_progress=False)
    found, scores = retriever.retrieve(asked, k=min(100, len(docnos)),
                                       show_progress=False)
    with open(args.out, "w", encoding="utf-8") as out:
        for (qid, _), rows, values in zip(queries, found, scores):
            ranked = [(float(s), docnos[d]) for d, s in zip(rows, values) if s > 0]
            for rank, (score, docno) in enumerate(sorted(ranked, key=lambda p: (-p[0], p[1]))):
                out.write(f"{qid} Q0 {docno} {rank + 1} {score:.6f} {args.tag}\n")


if __name__ == "__main__":
    main()
