"""Campaign configs: a YAML file declaring topics, qrels sets, systems, measure suites, options.

``load_config(path)`` returns a :class:`Config` or raises one :class:`ConfigError` listing
every problem with its file, line and YAML path (``systems[3].run: no such file 'runs/x.txt'``).
YAML is read with PyYAML's safe loader only (``yaml.compose`` with ``SafeLoader``, then the
safe constructor for scalars), which also gives each value's line.

Paths are relative to the config file. They may not leave the campaign folder, unless written
as absolute paths: the campaign folder is the config's folder, or its parent when the config
sits in a folder named ``configs`` (the layout ``configs/`` beside ``runs/``).

The package: ``types.py`` (what a config holds: its :class:`Collection`, one today, as
``Config.collections``; ``Config.run_table()`` and ``Config.qrels_set(name)``, which every
command uses), ``builder.py`` (``load_config`` and the builder), ``systems.py`` (the systems
section), ``tables.py`` (run tables: their column map, run template, other columns kept as
metadata), ``report.py`` (the ``report:`` section as a checked :class:`ReportSpec`).
"""

from __future__ import annotations

from ..system import System
from .builder import load_config, load_configs
from .report import RANK_FIELDS, REPORT_OPTIONS, ReportSpec
from .tables import read_table
from .types import (
                    DEFAULT_COLLECTION,
                    ENGINES,
                    MAX_TABLE_BYTES,
                    MAX_TABLE_ROWS,
                    NAME_RE,
                    SYSTEM_KEYS,
                    TABLE_COLUMNS,
                    TOP_KEYS,
                    TOPIC_MODES,
                    Collection,
                    Config,
                    QrelsSet,
                    Settings,
                    TableRow,
                    Validation,
                    campaign_root,
                    cluster_address_problem,
                    default_store,
                    pooled_systems,
                    priority_order,
)

__all__ = ["DEFAULT_COLLECTION", "ENGINES", "MAX_TABLE_BYTES", "MAX_TABLE_ROWS", "NAME_RE",
           "RANK_FIELDS", "REPORT_OPTIONS", "ReportSpec", "SYSTEM_KEYS", "TABLE_COLUMNS",
           "TOP_KEYS", "TOPIC_MODES", "Collection", "Config", "QrelsSet", "Settings", "System",
           "TableRow", "Validation", "campaign_root", "cluster_address_problem", "default_store",
           "load_config", "load_configs", "pooled_systems", "priority_order", "read_table"]
