"""Simulated generated answers for a simulated campaign (``irbench simulate OUT --answers``):
answer runs whose sentences cite the campaign's documents, with support labels, nugget lists
and nugget assignments that follow the documents' simulated relevance.

Built on a campaign :func:`irbench.simulate.simulate` wrote: its latent grades and the noise
every system shares come from :func:`irbench.simulate.simulated_relevance` (the same spec
gives the same values), which documents a topic's runs retrieved from its run files, and the
documents' text from :func:`irbench.documents.simulated.document_texts` (the text of
``documents.sgml.gz``). Every draw comes from one generator seeded with ``[seed, 39]`` (the
campaign's seed unless the answer spec gives one), in a fixed order, after the campaign's:
the campaign's files do not change, and the same seed writes byte-identical answer files.

The model, one choice at a time:

* Systems: each answer system has a quality ``uniform(0.2, 2.6)`` (as a ranked run's: how far a
  grade-1 document's score sits above the noise). Systems belong to the campaign's groups in
  turn (``groupA-rag1``, ``groupA-rag2``, ``groupB-rag1`` ...). Even systems write TREC RAG
  2024's format; odd ones RAG 2025's, citing by index ("format 1") or, every other one, by
  segment id ("format 2").
* References: per topic a ranking made as the ranked runs' are, ``signal * grade + shared
  noise + own noise`` over the documents any ranked run retrieved for the topic (those have
  text in ``documents.sgml.gz``), its top ``references`` (20) the answer's references.
* Sentences: 3 to 8 per answer, each citing 0 to 3 references (15/50/25/10 %), drawn with
  weights ``exp(0.7 * score)``: a better system ranks relevant documents higher and so cites
  them more often. A citing sentence restates the topic's sentence of its first cited
  document; an uncited one is a framing sentence on the topic.
* Support labels: by the cited document's latent grade, none/partial/full with probabilities
  85/10/5 % (grade 0), 15/35/50 % (grade 1) and 3/12/85 % (grade 2 and up); 3 % of citations
  are left not judged (-1).
* Nuggets: per topic 6 to 12, each tied to a relevant document the pool judged (else one a
  run retrieved, else any relevant one), drawn by grade; a nugget is vital with probability
  60 % when its document's grade is 2 or more, else 30 %, and at least one per topic is vital.
* Assignments: a nugget whose document the answer cites is ``support`` (85 %) or
  ``partial_support``; one not cited is ``partial_support`` 8 % of the time, else
  ``not_support``.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import re
import textwrap
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import yaml

from ..documents.simulated import document_texts
from ..errors import OutputError, SimulationError
from ..files import write_file
from ..simulate import (
    DOCNO_DIGITS,
    DOCNO_PREFIX,
    SUITES,
    SimulationResult,
    group_name,
    simulated_relevance,
)
from ..trec import read_qrels, read_run

STREAM = 39  # the answers' generator is seeded [seed, STREAM]
ANSWER_SUITE = ("support_precision", "support_recall", "support_precision(weight=hard)",
                "nugget_score(importance=vital,strict=true)", "nugget_score", "answer_words",
                "uncited_share")
MAX_REFERENCES = 20  # TREC RAG 2024's limit

_QUALITY_LOW, _QUALITY_HIGH = 0.2, 2.6
_TOPIC_INTERACTION_SIGMA = 0.25
_W_SHARED = 0.6  # as the ranked runs': the shared noise is simulate's own draw
_W_OWN = math.sqrt(1.0 - _W_SHARED**2)
_SENTENCES = (3, 8)
_CITATIONS_P = (0.15, 0.5, 0.25, 0.1)  # 0, 1, 2, 3 citations in a sentence
_CITE_SHARPNESS = 0.7
# P(label 0, 1, 2) by the cited document's grade (0, 1, 2+)
_SUPPORT_P = np.array([[0.85, 0.10, 0.05], [0.15, 0.35, 0.50], [0.03, 0.12, 0.85]])
_NOT_JUDGED_P = 0.03
_NUGGETS = (6, 12)
_VITAL_P = (0.3, 0.6)  # grade 1, grade 2+
_ASSIGNED_CITED_SUPPORT_P, _ASSIGNED_UNCITED_PARTIAL_P = 0.85, 0.08

_ONE_SOURCE = ("According to one source, ", "One report states that ",
               "It was reported that ", "A source notes that ")
_SOURCES = ("Several sources agree that ", "Reports confirm that ", "Sources describe how ")
_FRAMING = ("{Title} has drawn public attention in recent years.",
            "The question of {subject} {aspect} has no single answer.",
            "Overall, the evidence on {subject} {aspect} in {modifier} settings is mixed.",
            "More work is needed to understand {subject} {aspect} fully.")
_NUGGET_TEXTS = ("{subject} {aspect} was studied in a {modifier} setting",
                 "officials described {subject} {aspect} affecting {modifier} communities",
                 "specific cases of {subject} {aspect} were reported in {modifier} areas",
                 "policies on {subject} {aspect} were debated for {modifier} regions",
                 "the costs of {subject} {aspect}",
                 "the causes of {subject} {aspect}",
                 "who is affected by {subject} {aspect}",
                 "when {subject} {aspect} became a public issue",
                 "where {subject} {aspect} is most common",
                 "how authorities responded to {subject} {aspect}",
                 "public reaction to {subject} {aspect}",
                 "plans to address {subject} {aspect} in {modifier} regions")
_ASSIGNMENTS = ("not_support", "partial_support", "support")


@dataclass(frozen=True)
class AnswerSpec:
    """What to simulate on top of a campaign: ``systems`` answer systems, ``references`` per
    answer (at most 20, RAG 2024's limit), ``seed`` (None: the campaign's). Invalid values
    raise :class:`SimulationError` naming every bad parameter."""

    systems: int = 6
    references: int = MAX_REFERENCES
    seed: int | None = None

    def __post_init__(self) -> None:
        problems = []
        bounds = {"systems": (1, None), "references": (1, MAX_REFERENCES), "seed": (0, None)}
        for name, (low, high) in bounds.items():
            value = getattr(self, name)
            if name == "seed" and value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                problems.append(f"{name} must be an integer (got {value!r})")
                continue
            value = int(value)
            if value < low or (high is not None and value > high):
                problems.append(f"{name} must be in {low}..{'' if high is None else high} "
                                f"(got {value})")
            object.__setattr__(self, name, value)
        if problems:
            raise SimulationError("invalid answer spec: " + "; ".join(problems))


@dataclass(frozen=True)
class AnswerSystem:
    """One simulated answer system: its run file, format (``rag24`` or ``rag25``), how it
    cites (``indexes`` or ``ids``) and its simulated quality."""

    name: str
    group: str
    quality: float
    format: str
    citations: str
    path: Path


@dataclass(frozen=True)
class AnswerSimulation:
    """What :func:`simulate_answers` wrote (paths) on top of ``campaign``."""

    spec: AnswerSpec
    seed: int
    campaign: SimulationResult
    systems: tuple[AnswerSystem, ...]
    support_path: Path
    nuggets_path: Path
    assignments_path: Path
    json_path: Path


@dataclass(frozen=True)
class _Topic:
    """One topic as the answers see it: the documents any run retrieved (collection
    positions, ascending), their latent grades, shared noise and topic sentence; its nuggets'
    documents and grades."""

    query_id: str
    title: str
    words: dict
    ease: float
    docs: np.ndarray
    docnos: list
    grades: np.ndarray
    shared: np.ndarray
    said: list
    nugget_pool: tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True)
class _Answer:
    """One (system, topic) answer: references (rows of the topic's documents), sentences
    (text, reference indexes), one support label per citation, one assignment per nugget."""

    references: np.ndarray
    sentences: list
    labels: np.ndarray
    assignments: np.ndarray


@dataclass(frozen=True)
class _Nuggets:
    text: list
    vital: np.ndarray
    docs: np.ndarray


def simulate_answers(campaign: SimulationResult, spec: AnswerSpec = AnswerSpec()
                     ) -> AnswerSimulation:
    """Answer runs, support labels, nugget lists and assignments for ``campaign`` (as
    :func:`irbench.simulate.simulate` returned it), written into its folder: ``answers/<system>
    .jsonl``, ``judgments/support.jsonl`` (NIST's layout), ``judgments/nuggets.jsonl`` and
    ``judgments/assignments.jsonl`` (nuggetizer's) and ``answers.json`` (the seed, the spec and
    each system's quality). See the module docstring for the model."""
    if not isinstance(campaign, SimulationResult):
        raise TypeError(f"campaign must be a SimulationResult, not {type(campaign).__name__}")
    seed = campaign.spec.seed if spec.seed is None else spec.seed
    topics = _topics(campaign)
    rng = np.random.default_rng([seed, STREAM])
    quality = np.round(rng.uniform(_QUALITY_LOW, _QUALITY_HIGH, spec.systems), 4)
    nuggets = [_draw_nuggets(rng, topic) for topic in topics]
    answers = [[_draw_answer(rng, topic, float(q), spec.references, n) for q in quality]
               for topic, n in zip(topics, nuggets)]
    out = campaign.out_dir
    systems = _systems(campaign, quality, out)
    for s, system in enumerate(systems):
        _write(system.path, "".join(_answer_line(system, topic, answers[t][s])
                                    for t, topic in enumerate(topics)))
    result = AnswerSimulation(spec=spec, seed=seed, campaign=campaign, systems=systems,
                              support_path=out / "judgments" / "support.jsonl",
                              nuggets_path=out / "judgments" / "nuggets.jsonl",
                              assignments_path=out / "judgments" / "assignments.jsonl",
                              json_path=out / "answers.json")
    _write(result.support_path, "".join(
        _support_line(system, topic, answers[t][s]) for s, system in enumerate(systems)
        for t, topic in enumerate(topics)))
    _write(result.nuggets_path, "".join(
        _json_line({"qid": topic.query_id, "query": topic.title, "nuggets": [
            {"text": text, "importance": "vital" if vital else "okay"}
            for text, vital in zip(n.text, n.vital.tolist())]})
        for topic, n in zip(topics, nuggets)))
    _write(result.assignments_path, "".join(
        _assignment_line(system, topic, nuggets[t], answers[t][s])
        for s, system in enumerate(systems) for t, topic in enumerate(topics)))
    _write(result.json_path, _answers_json(result))
    return result


# ---- the campaign as the answers see it --------------------------------------------------


def _topics(campaign: SimulationResult) -> list[_Topic]:
    """Each topic's retrieved documents (from the run files), their grades, shared noise and
    text (as documents.sgml.gz holds it), and the documents its nuggets may come from."""
    spec = campaign.spec
    draws, pool = simulated_relevance(spec)
    query_ids = [t.query_id for t in campaign.topics]
    seen = _retrieved(campaign, query_ids, pool.candidates)
    texts = document_texts(draws.titles, [c[m] for c, m in zip(pool.candidates, seen)],
                           [g[m] for g, m in zip(pool.grades, seen)], spec.seed)
    judged = _judged_relevant(campaign, query_ids)
    width = max(DOCNO_DIGITS, len(str(spec.collection_size - 1)))
    topics = []
    for t, qid in enumerate(query_ids):
        order = np.argsort(pool.candidates[t][seen[t]], kind="stable")
        docs = pool.candidates[t][seen[t]][order]
        grades = pool.grades[t][seen[t]][order]
        modifier, subject, aspect = draws.titles[t].split(" ")
        words = {"modifier": modifier, "subject": subject, "aspect": aspect,
                 "Title": draws.titles[t].capitalize()}
        topics.append(_Topic(
            query_id=qid, title=draws.titles[t], words=words, ease=float(draws.ease[t]),
            docs=docs, docnos=[f"{DOCNO_PREFIX}{d:0{width}d}" for d in docs.tolist()],
            grades=grades, shared=pool.shared[t][seen[t]][order],
            said=[_topic_sentence(texts[d], subject, aspect) for d in docs.tolist()],
            nugget_pool=_nugget_pool(judged.get(qid), docs, grades, pool.candidates[t],
                                     pool.grades[t])))
    return topics


def _retrieved(campaign: SimulationResult, query_ids: list[str],
               candidates: list[np.ndarray]) -> list[np.ndarray]:
    """Per topic, which of its candidates any run retrieved (a mask over the candidates)."""
    found: list[list[np.ndarray]] = [[] for _ in query_ids]
    index = {qid.encode("ascii"): t for t, qid in enumerate(query_ids)}
    for run in campaign.runs:
        read = read_run(str(run.path))
        for qid, t in index.items():
            found[t].append(_positions(read.doc_id[read.query_id == qid]))
    return [np.isin(c, np.concatenate(f)) if f else np.zeros(len(c), dtype=bool)
            for c, f in zip(candidates, found)]


def _positions(docnos: np.ndarray) -> np.ndarray:
    """Collection positions of ``SIM-00001234`` docnos."""
    if len(docnos) == 0:
        return np.zeros(0, dtype=np.int64)
    return np.char.lstrip(docnos, DOCNO_PREFIX.encode("ascii")).astype(np.int64)


def _judged_relevant(campaign: SimulationResult, query_ids: list[str]) -> dict:
    """{query id: positions of the documents the pool judged relevant}."""
    qrels = read_qrels(str(campaign.qrels_path))
    relevant = qrels.relevance > 0
    return {qid: _positions(qrels.doc_id[relevant & (qrels.query_id == qid.encode("ascii"))])
            for qid in query_ids}


def _nugget_pool(judged: np.ndarray | None, docs: np.ndarray, grades: np.ndarray,
                 candidates: np.ndarray, all_grades: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(positions, grades) of the relevant documents nuggets come from: those judged, else
    those retrieved, else every relevant candidate."""
    if judged is not None and np.isin(docs, judged).any():
        mask = np.isin(docs, judged)
        return docs[mask], grades[mask]
    if (grades > 0).any():
        return docs[grades > 0], grades[grades > 0]
    order = np.argsort(candidates[all_grades > 0], kind="stable")
    return candidates[all_grades > 0][order], all_grades[all_grades > 0][order]


def _topic_sentence(sentences: list[str], subject: str, aspect: str) -> str:
    """The document's sentence on the topic: one naming its subject and aspect, else its
    subject, else its first."""
    for needle in (f"{subject} {aspect}", subject):
        for sentence in sentences:
            if re.search(rf"\b{re.escape(needle)}\b", sentence):
                return sentence
    return sentences[0]


def _systems(campaign: SimulationResult, quality: np.ndarray, out: Path
             ) -> tuple[AnswerSystem, ...]:
    groups, n = campaign.spec.groups, len(quality)
    systems: list[AnswerSystem] = []
    per_group: dict[str, int] = {}
    for s in range(n):
        group = group_name(s * groups // n)
        per_group[group] = per_group.get(group, 0) + 1
        name = f"{group}-rag{per_group[group]}"
        systems.append(AnswerSystem(
            name=name, group=group, quality=float(quality[s]),
            format="rag25" if s % 2 else "rag24",
            citations="ids" if s % 4 == 3 else "indexes",
            path=out / "answers" / f"{name}.jsonl"))
    return tuple(systems)


# ---- draws -------------------------------------------------------------------------------


def _draw_nuggets(rng: np.random.Generator, topic: _Topic) -> _Nuggets:
    docs, grades = topic.nugget_pool
    k = int(rng.integers(_NUGGETS[0], _NUGGETS[1] + 1))
    texts = rng.choice(len(_NUGGET_TEXTS), k, replace=False)
    weights = grades / grades.sum()
    picked = rng.choice(len(docs), k, replace=k > len(docs), p=weights)
    vital = rng.random(k) < np.where(grades[picked] >= 2, _VITAL_P[1], _VITAL_P[0])
    if not vital.any():
        vital[int(np.argmax(grades[picked]))] = True
    text = [_NUGGET_TEXTS[i].format(**topic.words) for i in texts.tolist()]
    return _Nuggets(text=[t[0].upper() + t[1:] for t in text], vital=vital, docs=docs[picked])


def _draw_answer(rng: np.random.Generator, topic: _Topic, quality: float, references: int,
                 nuggets: _Nuggets) -> _Answer:
    """One system's answer to one topic; draws in a fixed order (see the module docstring)."""
    signal = quality * topic.ease * rng.lognormal(0.0, _TOPIC_INTERACTION_SIGMA)
    score = (signal * topic.grades + topic.shared
             + _W_OWN * rng.standard_normal(len(topic.docs)))
    top = np.lexsort((topic.docs, -score))[:references]  # score descending, then docno
    weights = np.exp(_CITE_SHARPNESS * (score[top] - score[top].max()))
    weights /= weights.sum()
    n_sentences = int(rng.integers(_SENTENCES[0], _SENTENCES[1] + 1))
    n_cited = np.minimum(rng.choice(len(_CITATIONS_P), n_sentences, p=_CITATIONS_P), len(top))
    picks = rng.integers(0, 1 << 16, n_sentences)
    sentences = []
    for n, pick in zip(n_cited.tolist(), picks.tolist()):
        cited = (rng.choice(len(top), n, replace=False, p=weights).tolist() if n else [])
        sentences.append((_sentence_text(topic, top, cited, pick), cited))
    cited_rows = top[[i for _, cited in sentences for i in cited]]
    grade = np.minimum(topic.grades[cited_rows], 2)
    u, unjudged = rng.random(len(cited_rows)), rng.random(len(cited_rows)) < _NOT_JUDGED_P
    labels = (u[:, None] > np.cumsum(_SUPPORT_P, axis=1)[grade][:, :2]).sum(axis=1)
    labels = np.where(unjudged, -1, labels)
    cites_nugget = np.isin(nuggets.docs, topic.docs[cited_rows])
    u = rng.random(len(nuggets.docs))
    assignments = np.where(cites_nugget, np.where(u < _ASSIGNED_CITED_SUPPORT_P, 2, 1),
                           np.where(u < _ASSIGNED_UNCITED_PARTIAL_P, 1, 0))
    return _Answer(references=top, sentences=sentences, labels=labels,
                   assignments=assignments)


def _sentence_text(topic: _Topic, top: np.ndarray, cited: list[int], pick: int) -> str:
    if not cited:
        return _FRAMING[pick % len(_FRAMING)].format(**topic.words)
    said = topic.said[int(top[cited[0]])]
    lead = (_ONE_SOURCE if len(cited) == 1 else _SOURCES)
    return lead[pick % len(lead)] + said[0].lower() + said[1:]


# ---- files -------------------------------------------------------------------------------


def _json_line(obj: dict) -> str:
    return json.dumps(obj, ensure_ascii=True) + "\n"


def _answer_line(system: AnswerSystem, topic: _Topic, answer: _Answer) -> str:
    refs = [topic.docnos[i] for i in answer.references.tolist()]
    sentences = [{"text": text, "citations": [refs[i] for i in cited]
                  if system.citations == "ids" else list(cited)}
                 for text, cited in answer.sentences]
    if system.format == "rag25":
        return _json_line({"metadata": {"team_id": system.group, "run_id": system.name,
                                        "type": "automatic", "narrative_id": topic.query_id,
                                        "narrative": topic.title},
                           "references": refs, "answer": sentences})
    words = sum(len(text.split()) for text, _ in answer.sentences)
    return _json_line({"run_id": system.name, "topic_id": topic.query_id, "topic": topic.title,
                       "references": refs, "response_length": words, "answer": sentences})


def _support_line(system: AnswerSystem, topic: _Topic, answer: _Answer) -> str:
    labels = iter(answer.labels.tolist())
    refs = answer.references.tolist()
    return _json_line({"topic_id": topic.query_id, "run_id": system.name, "sentences": [
        {"text": text, "citations": [{"reference": topic.docnos[refs[i]],
                                      "support": next(labels)}
                                     for i in cited]}
        for text, cited in answer.sentences]})


def _assignment_line(system: AnswerSystem, topic: _Topic, nuggets: _Nuggets,
                     answer: _Answer) -> str:
    return _json_line({"qid": topic.query_id, "run_id": system.name, "nuggets": [
        {"text": text, "importance": "vital" if vital else "okay",
         "assignment": _ASSIGNMENTS[a]}
        for text, vital, a in zip(nuggets.text, nuggets.vital.tolist(),
                                  answer.assignments.tolist())]})


def _answers_json(result: AnswerSimulation) -> str:
    out = result.campaign.out_dir
    doc = {
        "spec": {**asdict(result.spec), "seed": result.seed},
        "seed": result.seed,
        "stream": [result.seed, STREAM],
        "campaign": result.campaign.campaign_path.relative_to(out).as_posix(),
        "files": {"support": result.support_path.relative_to(out).as_posix(),
                  "nuggets": result.nuggets_path.relative_to(out).as_posix(),
                  "assignments": result.assignments_path.relative_to(out).as_posix()},
        "systems": [{"name": s.name, "group": s.group, "quality": s.quality,
                     "format": s.format, "citations": s.citations,
                     "path": s.path.relative_to(out).as_posix()} for s in result.systems],
    }
    return json.dumps(doc, indent=2) + "\n"


def _write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_file(path, text.encode("ascii"))
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None


# ---- the config ----------------------------------------------------------------------------


def write_answers_config(result: AnswerSimulation, path: str | os.PathLike,
                         command: str | None = None) -> Path:
    """A campaign config at ``path`` over the campaign's ranked runs and the simulated answer
    systems, paths relative to it: the documents' qrels, the support labels (kind
    ``support``) and the nugget assignments (kind ``nuggets``), a suite of answer measures
    beside the ranked ones, the documents declared. ``command``: how the files were made, said
    in the config's first comment. The config's path."""
    target = Path(path)
    folder = os.path.abspath(target.parent)

    def rel(p: Path) -> str:
        return Path(os.path.relpath(os.path.abspath(p), folder)).as_posix()

    campaign = result.campaign
    spec = campaign.spec
    name = re.sub(r"[^A-Za-z0-9_-]", "-", target.stem).strip("-.") or "simulated"
    systems: list[dict] = [
        {"name": r.name, "run": rel(r.path), "group": r.group, "type": r.type,
         "priority": int(r.name.rsplit("-")[-1]), "pooled": r.pooled} for r in campaign.runs]
    systems += [{"name": s.name, "answers": rel(s.path), "format": s.format, "group": s.group,
                 "type": "automatic"} for s in result.systems]
    config = {
        "name": name[:128],
        "collection": {
            "topics": rel(campaign.topics_path),
            "qrels": {"official": rel(campaign.qrels_path),
                      "support": {"path": rel(result.support_path), "kind": "support"},
                      "nuggets": {"path": rel(result.assignments_path), "kind": "nuggets"}},
            "documents": rel(campaign.out_dir / "documents.sgml.gz"),
            "size": spec.collection_size},
        "systems": systems,
        "suites": {"core": list(SUITES["core"]), "answers": list(ANSWER_SUITE)},
        "evaluation": {"topics": "qrels", "relevance_level": 1},
        "report": {"pool_depth": spec.pool_depth},
    }
    said = (f"Written by 'irbench simulate --answers': {len(campaign.runs)} ranked runs and "
            f"{len(result.systems)} answer systems of {spec.groups} groups x {spec.topics} "
            f"topics (seed {spec.seed}; the answers' {result.seed}); support labels and nugget "
            "assignments follow the documents' simulated relevance. Paths are relative to this "
            "file." + (" Made by:" if command else ""))
    head = "".join(f"# {line}\n" for line in textwrap.wrap(said, 96))
    head += f"#   {command}\n" if command else ""
    _write(target, head + yaml.safe_dump(config, sort_keys=False, default_flow_style=None,
                                         width=100))
    return target
