"""Topic files: TREC <top> blocks and query_id<TAB>text TSV."""

from __future__ import annotations

import pytest

from irbench.errors import FormatError
from irbench.topics import read_topics

TREC = """<top>
<num> Number: 401
<title> foreign minorities, Germany

<desc> Description:
What language and cultural differences impede the integration
of foreign minorities in Germany?
</top>

<top>
<num> Number: 402 <title>
<desc> Description:
What is the status of behavioral genetics research, today and in the
recent past, in the field of human behavior?
</top>
"""


def test_trec_topic_file(tmp_path):
    path = tmp_path / "topics.401-402"
    path.write_text(TREC)
    topics = read_topics(str(path))
    assert topics.query_id == ("401", "402")
    assert topics.text[0] == "foreign minorities, Germany"
    assert topics.text[1].startswith("What is the status of behavioral genetics research")


def test_tsv_topics_keep_string_ids(tmp_path):
    path = tmp_path / "topics.tsv"
    path.write_text("# comment\n2024-145763\tsome query\nq1.X\tnaïve text\n\n")
    topics = read_topics(str(path))
    assert topics.query_id == ("2024-145763", "q1.X")
    assert topics.text == ("some query", "naïve text")


@pytest.mark.parametrize("text,where,reason", [
    ("q1\ta\nq2 b\n", 2, "expected 'query_id<TAB>text'"),
    ("q1\ta\nq1\tb\n", 2, "topic 'q1' repeated (first at line 1)"),
    ("<top>\n<title> x\n</top>\n", 1, "topic without <num>"),
    ("\n\n", 1, "no topics found"),
])
def test_bad_topic_files(tmp_path, text, where, reason):
    path = tmp_path / "t.txt"
    path.write_text(text)
    with pytest.raises(FormatError) as info:
        read_topics(str(path))
    assert info.value.problems == [f"{path}:{where}: {reason}"]
