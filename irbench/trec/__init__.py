"""Readers for TREC run and qrels files, as whole columns (see ``text.py`` for the rules they
follow), in four modules: ``ids.py`` (what every reader shares: Run, Qrels, how ids show),
``sources.py`` (paths, stdin, file objects, URLs, gzip), ``frames.py`` (in-memory data and data
frames) and ``text.py`` (the TREC text formats)."""

from __future__ import annotations

from .frames import (  # noqa: F401
    FRAME_COLUMNS,
    frame_column,
    frame_names,
    is_frame,
    pandas_module,
    qrels_from_memory,
    run_from_memory,
)
from .ids import (  # noqa: F401
    MAX_ID_BYTES,
    MAX_RELEVANCE,
    MIN_RELEVANCE,
    SHOWN_BYTES,
    UTF8_BOM,
    Loaded,
    Problems,
    Qrels,
    Readable,
    Run,
    Source,
    as_strings,
    bytes_array,
    check_qrels_duplicates,
    display,
    is_source,
    shown,
    token_words,
)
from .sources import (  # noqa: F401
    GUNZIP_FLOOR,
    GUNZIP_RATIO,
    GZIP_MAGIC,
    glob_url,
    gunzip,
    gunzip_limit,
    gunzip_or_fail,
    inflate,
    is_url,
    open_binary,
    read_source,
    read_url,
    source_size,
    url_stat,
    without_bom,
)
from .text import (  # noqa: F401
    CHUNK,
    FLOAT_RE,
    RUN_SUFFIXES,
    PartJoiner,
    concat,
    default_name,
    longest_token,
    parse_run,
    read_qrels,
    read_run,
    read_zscores,
    regular_lines,
    relevance_of,
    run_name,
    run_of_parts,
    run_tag,
    too_long,
)
