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


def test_zero_padded_trec_numbers_are_read_as_numbers(tmp_path):
    """TREC-1..3 topic files write 'Number: 051'; their qrels and runs write 51."""
    path = tmp_path / "topics.51-100"
    path.write_text("<top>\n<head> Tipster Topic Description\n<num> Number:  051\n"
                    "<dom> Domain:  International Economics\n<title> Topic:  Airbus Subsidies\n"
                    "</top>\n<top>\n<num> Number: 000\n<title> zero\n</top>\n"
                    "<top>\n<num> Number: C041\n<title> letters stay\n</top>\n")
    topics = read_topics(str(path))
    assert topics.query_id == ("51", "0", "C041")
    assert topics.text[0] == "Airbus Subsidies"


def test_tsv_topics_keep_string_ids(tmp_path):
    path = tmp_path / "topics.tsv"
    path.write_text("# comment\n2024-145763\tsome query\nq1.X\tnaïve text\n\n")
    topics = read_topics(str(path))
    assert topics.query_id == ("2024-145763", "q1.X")
    assert topics.text == ("some query", "naïve text")


WEB_XML = """<webtrack2010>
<topic number="51" type="faceted">
  <query>horse hooves</query>
  <description>
    Find information about horse hooves, their care, and diseases of hoofs.
  </description>
  <subtopic number="1" type="inf">Find information about horses' hooves and how to care for them.</subtopic>
</topic>
<topic number='52' type="single">
  <query>avp &amp; sports</query>
</topic>
</webtrack2010>
"""
CLEF_XML = """<topics>
<topic lang="en">
<identifier>10.2452/401-AH</identifier>
<title><![CDATA[Euro Inflation]]></title>
<description>Find documents about rises in prices after the introduction of the Euro.</description>
</topic>
</topics>
"""
NTCIR_XML = """<TOPIC><NUM>0001</NUM><DESCRIPTION>Find pages about the 2020 Olympic Games host city
selection.</DESCRIPTION></TOPIC>"""


@pytest.mark.parametrize("text, ids, first", [
    (WEB_XML, ("51", "52"), "horse hooves"),
    (CLEF_XML, ("10.2452/401-AH",), "Euro Inflation"),
    (NTCIR_XML, ("0001",), "Find pages about the 2020 Olympic Games host city selection."),
])
def test_xml_topic_files(tmp_path, text, ids, first):
    path = tmp_path / "topics.xml"
    path.write_text(text)
    topics = read_topics(str(path))
    assert topics.query_id == ids and topics.text[0] == first
    if ids == ("51", "52"):
        assert topics.text[1] == "avp & sports"


@pytest.mark.parametrize("text,where,reason", [
    ("q1\ta\nq2 b\n", 2, "expected 'query_id<TAB>text'"),
    ("q1\ta\nq1\tb\n", 2, "topic 'q1' repeated (first at line 1)"),
    ("<top>\n<title> x\n</top>\n", 1, "topic without <num>"),
    ("<topics>\n<topic type='x'><query>q</query></topic>\n<topic number=\"7\"/>\n</topics>",
     2, "topic without a number attribute or <num>/<identifier>"),
    ("<topic number='1'><query>a</query></topic><topic number='1'></topic>", 1,
     "topic '1' repeated (first at line 1)"),
    ("\n\n", 1, "no topics found"),
])
def test_bad_topic_files(tmp_path, text, where, reason):
    path = tmp_path / "t.txt"
    path.write_text(text)
    with pytest.raises(FormatError) as info:
        read_topics(str(path))
    assert info.value.problems == [f"{path}:{where}: {reason}"]
