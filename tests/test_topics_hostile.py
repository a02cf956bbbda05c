"""Topic statements with '<' in their text, and hostile topic files (issue 35): only the tags
of the format end a field, and every file is read in time linear in its size."""

from __future__ import annotations

import pytest

from irbench.errors import FormatError
from irbench.topics import read_topics

TREC = """<top>
<num> Number: 401
<title> a<b comparisons

<desc> Description:
Find documents where x<y and y>z, or <i>italics</i> <b>are</b> mentioned.

<narr> Narrative:
A relevant document says a<b.
</top>
<top>
<num> Number: 402 </num>
<title> closed title </title>
<desc> closed description </desc>
</top>
<top>
<head> Tipster Topic Description
<num> Number:  051
<dom> Domain:  International Economics
<title> Topic:  Airbus <Subsidies>
<smry> Summary:  the summary
<con> Concept(s): 1. Airbus
<fac> Factor(s): none
</top>
"""


def test_trec_fields_keep_a_lt_that_is_no_tag_of_the_format(tmp_path):
    """Before: the title "a<b comparisons" became "a", the description ended at "x"."""
    path = tmp_path / "topics.txt"
    path.write_text(TREC)
    topics = read_topics(str(path))
    assert topics.query_id == ("401", "402", "51")
    assert topics.text == ("a<b comparisons", "closed title", "Airbus <Subsidies>")
    assert topics.statement("401") == {
        "query_id": "401", "title": "a<b comparisons",
        "description": "Find documents where x<y and y>z, or <i>italics</i> <b>are</b> "
                       "mentioned.",
        "narrative": "A relevant document says a<b."}
    assert topics.statement("402")["description"] == "closed description"
    assert topics.statement("51")["narrative"] == ""


XML = """<topics>
<topic number="1">
  <query>a<b comparisons</query>
  <description>Find x<y and y>z, with <i>tags</i> and <!-- a comment --> &amp; an
  entity.</description>
</topic>
<topic number="2">
  <title><![CDATA[a<b>c &amp; d]]></title>
  <narrative>n <a href="x">link</a> <br/> end</narrative>
</topic>
</topics>
"""


def test_xml_fields_keep_a_lt_that_starts_no_tag(tmp_path):
    path = tmp_path / "topics.xml"
    path.write_text(XML)
    topics = read_topics(str(path))
    assert topics.query_id == ("1", "2")
    assert topics.text == ("a<b comparisons", "a<b>c &amp; d")  # CDATA as it is
    assert topics.statement("1")["description"] == "Find x<y and y>z, with tags and & an entity."
    assert topics.statement("2")["narrative"] == "n link end"


FOUR_MB = 4_000_000
HOSTILE = {
    "unclosed tops": b"<top>" * (FOUR_MB // 5),
    "lt in a title": b"<top><num>1<title>" + b"<a" * (FOUR_MB // 2) + b"</top>",
    "lt and spaces": b"<top><num>1<title>" + b"< " * (FOUR_MB // 2) + b"</top>",
    "unclosed titles": b"<top><num>1" + b"<title>" * (FOUR_MB // 7) + b"</top>",
    "unknown closings": b"<top><num>1<title>" + b"</a" * (FOUR_MB // 3) + b"</top>",
    "unclosed topics": b"<topic " * (FOUR_MB // 7),
    "unclosed queries": b"<topic number='1'>" + b"<query>" * (FOUR_MB // 7) + b"</topic>",
    "unclosed cdata": (b"<topic number='1'><query><![CDATA[" * (FOUR_MB // 34)
                       + b"</query></topic>"),
    "tags without end": b"<topic number='1'><query>" + b"<a b" * (FOUR_MB // 4)
                        + b"></query></topic>",
    "attributes": b"<topic number='1'><query><a" + b' b="' * (FOUR_MB // 4)
                  + b"></query></topic>",
    "comments": b"<topic number='1'><query>" + b"<!--" * (FOUR_MB // 4) + b"--></query></topic>",
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", HOSTILE)
def test_four_megabytes_of_hostile_topics_are_read_in_linear_time(tmp_path, name):
    path = tmp_path / "topics"
    path.write_bytes(HOSTILE[name])
    try:
        topics = read_topics(str(path))
    except FormatError as exc:
        assert exc.problems == [f"{path}:1: no topics found"]
    else:
        assert topics.query_id == ("1",)
