"""The shape of the package: one home per stage, no import circles, the command line in one
package, and fixtures that are what they claim to be."""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "irbench"
DATA = Path(__file__).resolve().parent / "data"
MAX_TOP_LEVEL_MODULES = 16


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """irbench modules ``module`` imports anywhere in its file, function bodies included."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                name = f"{target}.{alias.name}"
                found.add(name if name in modules else target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name in modules and name != module}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circle_counting_imports_inside_functions():
    modules = _modules()
    graph = {m: _imports(m, p, modules) for m, p in modules.items()}
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_few_top_level_modules():
    top = sorted(p.stem for p in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top


def _uses(path: Path, name: str) -> bool:
    tree = ast.parse(path.read_text())
    return any(isinstance(node, ast.Name) and node.id == name
               or isinstance(node, ast.alias) and node.name == name for node in ast.walk(tree))


def test_only_the_command_line_uses_argparse_and_usage_errors():
    for path in sorted(PACKAGE.rglob("*.py")):
        if "cli" in path.relative_to(PACKAGE).parts or path.name == "errors.py":
            continue
        assert not _uses(path, "argparse"), path
        assert not _uses(path, "UsageError"), path


def test_every_command_module_is_in_the_cli_package():
    for path in sorted(PACKAGE.rglob("*.py")):
        if "cli" not in path.relative_to(PACKAGE).parts:
            assert "add_parsers" not in path.read_text(), path


def _sums() -> dict[str, str]:
    return {name: digest for digest, name in
            (line.split("  ", 1) for line in (DATA / "SHA256SUMS").read_text().splitlines())}


def test_test_data_matches_its_checksums():
    """tests/data holds trec_eval's outputs and fixtures copied byte for byte: any change is
    deliberate. After one, regenerate the list: cd tests/data && find . -type f ! -name
    SHA256SUMS | LC_ALL=C sort | sed 's|^./||' | xargs sha256sum > SHA256SUMS"""
    present = {str(p.relative_to(DATA)): hashlib.sha256(p.read_bytes()).hexdigest()
               for p in sorted(DATA.rglob("*")) if p.is_file() and p.name != "SHA256SUMS"}
    expected = _sums()
    assert sorted(set(present) - set(expected)) == [], "files missing from SHA256SUMS"
    assert sorted(set(expected) - set(present)) == [], "files listed but absent"
    changed = sorted(name for name in expected if present[name] != expected[name])
    assert changed == [], "files changed since SHA256SUMS was written"


SQL_WORDS = ("SELECT", "INSERT", "CREATE", "UPDATE", "DELETE", "DROP", "ALTER")


def test_only_the_store_speaks_sql():
    import re

    pattern = re.compile(r"\b(" + "|".join(SQL_WORDS) + r")\b")
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.parent == PACKAGE / "store":  # the store package: the only one speaking SQL
            continue
        found = [n for n, line in enumerate(path.read_text().splitlines(), 1)
                 if pattern.search(line)]
        assert found == [], f"{path}: SQL on lines {found}"


def test_no_private_name_crosses_a_module():
    """A module's private names (``_x``) are its own: no other module of irbench imports them
    (``from .trec import _x``) or reaches for them (``trec._x``)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level or
                                                     (node.module or "").startswith("irbench")):
                found += [f"{path.relative_to(PACKAGE)}: imports {a.name}" for a in node.names
                          if a.name.startswith("_") and not a.name.startswith("__")]
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                    and not node.attr.startswith("__") and isinstance(node.value, ast.Name)
                    and (PACKAGE / f"{node.value.id}.py").exists()
                    and path.stem != node.value.id):
                found.append(f"{path.relative_to(PACKAGE)}: {node.value.id}.{node.attr}")
    assert found == []


# ---- sizes and seams (issue 24) -------------------------------------------------------------

MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
MAX_POSITIONAL = 5  # a constructor called with more positional arguments: use keywords

# The only imports allowed inside functions outside the command line (irbench/cli/, whose
# command modules import what their command needs when it runs): what would make start-up or a
# run slow for those that do not use it. Each with its reason.
LAZY_IMPORTS = {
    "importlib.metadata": "12 ms of irbench run's start-up (email, zipfile); only the "
                          "package versions recorded for systems given as commands",
    "subprocess": "5 ms of irbench run's start-up; only systems given as commands run one",
    "duckdb": "90 ms; irbench run forks its workers first and opens a new store while they "
              "score (irbench.store.connection); irbench eval never needs it",
    "scipy": "0.3-1 s to import; only the statistics and the report's intervals need it",
    "matplotlib": "the report's charts (the report extra)",
    "distributed": "the Dask engine (the cluster extra)",
    "pandas": "data frames in and out (the pandas extra)",
    "pyarrow": "Arrow tables in (with pandas or Polars)",
    "fsspec": "object storage URLs (the remote extra)",
    "ir_datasets": "irds: inputs (an extra)",
    "pypdf": "binding the appendix PDF (the report extra: --appendix-pdf only)",
    "multiprocessing": "8 ms of irbench eval's start-up; only worker processes need it",
    "ctypes": "PR_SET_PDEATHSIG in worker processes only",
    "signal": "0.5 ms of irbench eval's start-up; worker processes set their handlers",
    "tempfile": "2 ms of irbench eval's start-up (with shutil, random); a big run read in "
                "parts needs it",
    "difflib": "0.7 ms of irbench eval's start-up; only an unknown measure name needs it",
    "hashlib": "7 ms of irbench eval's start-up (OpenSSL); the readers need it for URLs only",
    "jinja2": "15 ms of every command that reads a config; only a config with model judges "
              "compiles their prompts",
    "httpx": "model judges only (the judge extra)",
    "concurrent.futures": "9 ms of irbench run's start-up (with logging); only systems given "
                          "as commands run in its threads",
    "irbench.judges.spec": "22 ms of irbench run's start-up (certifi, the prompts); only a "
                           "config with judges: builds them",
    "irbench.judgments.agreement": "8 ms of irbench run's start-up; of the analyses, only the "
                                   "agreement between qrels sets needs it",
    "uvicorn": "the assessment server only (the assess extra)",
    "statsmodels": "the meta-analysis across collections only (the stats extra)",
    "irbench.analyses.reduction": "imports scipy (through irbench.stats)",
    "irbench.stats.repro": "imports scipy; every config with reproductions: parses the "
                           "reproducibility measures' names (irbench.measures.reproduction)",
    "irbench.documents": "15 ms of irbench run's start-up (the index, the formats, the files); "
                         "only answer runs checked against the documents open them",
    "irbench.submissions": "6 ms of irbench run's start-up (the checks, the rules); only a "
                           "config with validation: checks its runs",
    "irbench.runner.commands": "5 ms of irbench run's start-up (threads, shlex, the files' "
                               "hashing); only systems given as commands need it",
    "irbench.runner.produced": "imports irbench.runner.commands: a new store has no commands "
                               "to execute (irbench run of a config without them)",
    "irbench.topics": "4 ms of irbench run's start-up (with html); a config with topics: reads "
                      "them",
    "irbench.answers.scored": "answer runs' references as a ranking: answer runs only",
    "irbench.judgments.answered": "3 ms of irbench run's start-up (the nugget and support "
                                  "kinds); answer runs only",
    "irbench.measures.reproduction": "5 ms of irbench run's start-up (its families' "
                                     "dataclasses); only a config with reproductions: needs it",
    "irbench.pooling": "imports scipy (through irbench.stats); irbench run imports the "
                       "analyses, which rebuild a pool only for the pool-bias section",
}


# Modules loaded by name when first used (importlib.import_module), and why: the package
# exports of PEP 562 (a name is imported when first asked for), the command modules, and the
# judgment kinds' modules (the registry loads a kind's when it is used: 4 ms of irbench eval's
# start-up on ad hoc qrels).
LOADED_BY_NAME = {
    "irbench": "the package's subpackage irbench.stats on first use",
    "irbench.cli": "each command's module, so irbench run and eval start at once",
    "irbench.judgments": "the kinds' modules, by the registry, when a kind is used",
    "irbench.registry": "the packages' exports when first asked for (irbench, irbench.runner, "
                        "irbench.judgments, irbench.documents, irbench.submissions, "
                        "irbench.report, irbench.stats)",
}


def _functions(tree: ast.AST):
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _absolute(module: str, path: Path, node: ast.ImportFrom) -> str:
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    if not node.level:
        return node.module or ""
    base = package[: len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def test_no_module_is_too_long():
    long = {m: n for m, p in _modules().items()
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert long == {}


def test_no_function_is_too_long():
    long = {}
    for module, path in _modules().items():
        for node in _functions(ast.parse(path.read_text())):
            if node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES:
                long[f"{module}.{node.name}"] = node.end_lineno - node.lineno + 1
    assert long == {}


def test_no_global_statement():
    found = [f"{module}:{node.lineno}" for module, path in _modules().items()
             for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Global)]
    assert found == []


def test_no_constructor_takes_many_positional_arguments():
    found = []
    for module, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = (func.id if isinstance(func, ast.Name) else
                    func.attr if isinstance(func, ast.Attribute) else "")
            positional = [a for a in node.args if not isinstance(a, ast.Starred)]
            if name[:1].isupper() and len(positional) > MAX_POSITIONAL:
                found.append(f"{module}:{node.lineno}: {name}")
    assert found == []


def test_imports_inside_functions_are_the_listed_lazy_ones():
    found = []
    for module, path in _modules().items():
        if module.startswith("irbench.cli"):
            continue
        for function in _functions(ast.parse(path.read_text())):
            for node in ast.walk(function):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom):
                    names = [_absolute(module, path, node)]
                else:
                    continue
                for name in names:
                    if not any(name == lazy or name.startswith(lazy + ".")
                               for lazy in LAZY_IMPORTS):
                        found.append(f"{module}:{node.lineno}: {name}")
    assert found == []


def test_modules_are_loaded_by_name_only_where_listed():
    found = set()
    for module, path in _modules().items():
        text = path.read_text()
        if "import_module(" in text:
            found.add(module)
    assert found <= set(LOADED_BY_NAME), found - set(LOADED_BY_NAME)



# ---- thin commands (issue 36) ----------------------------------------------------------------

MAX_COMMAND_LINES = 40  # a cmd_* function parses, calls the library, prints
# Packages whose modules are internal to the command line: it imports the package (the names
# its __init__ makes public), never one of its modules, nor reaches one as an attribute
# (``pooling.simulation.X``).
SEALED = ("irbench.pooling", "irbench.judgments")


def _sealed_uses(module: str, path: Path, text: str, modules: dict[str, Path]) -> list[str]:
    """The modules of a :data:`SEALED` package that ``text`` (the module's) imports or
    reaches as an attribute."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom):
            target = _absolute(module, path, node)
            names = [target] + [f"{target}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            names = [f"irbench.{node.value.id}.{node.attr}"]
        else:
            continue
        found += [f"{module}:{node.lineno}: {name}" for name in names
                  if name in modules and name.rsplit(".", 1)[0] in SEALED]
    return found


def test_the_command_line_uses_pooling_and_judgments_by_their_public_names_only():
    modules = _modules()
    found = [use for module, path in modules.items() if module.startswith("irbench.cli")
             for use in _sealed_uses(module, path, path.read_text(), modules)]
    assert found == []


def test_the_sealed_check_sees_each_way_of_reaching_a_module():
    modules = _modules()
    path = modules["irbench.cli.pool"]
    for text in ("from ..pooling.persist import decode_state\n",
                 "import irbench.judgments.rules\n",
                 "from .. import pooling\nx = pooling.simulation.DEFAULT_STRATEGIES\n",
                 "from ..judgments import rules\n"):
        assert _sealed_uses("irbench.cli.pool", path, text, modules), text
    assert _sealed_uses("irbench.cli.pool", path, "from ..pooling import load_state\n"
                        "from ..judgments import RULES\n", modules) == []


def test_every_command_function_is_short():
    long = {}
    for module, path in _modules().items():
        if not module.startswith("irbench.cli"):
            continue
        for node in _functions(ast.parse(path.read_text())):
            length = node.end_lineno - node.lineno + 1
            if node.name.startswith("cmd_") and length > MAX_COMMAND_LINES:
                long[f"{module}.{node.name}"] = length
    assert long == {}


def test_one_writer_of_judgments():
    """Every producer of judgments (files judged into a pool, imported qrels, model judges,
    the browser) writes through Store.record_judgments: one INSERT INTO judgments."""
    import re

    insert = re.compile(r"INSERT\s+(?:OR\s+\w+\s+)?INTO\s+judgments\b", re.IGNORECASE)
    sites = [f"{path.relative_to(PACKAGE.parent)}:{text.count(chr(10), 0, m.start()) + 1}"
             for path in sorted(PACKAGE.rglob("*.py")) for text in [path.read_text()]
             for m in insert.finditer(text)]
    assert len(sites) == 1 and sites[0].startswith("irbench/store/judging.py:"), sites


def test_every_jinja_environment_is_strict():
    """Every Jinja2 environment irbench makes (the report, the desk, the judges' sandbox)
    refuses an undefined name: a template reading a name its documented context lacks is an
    error, never an empty string (the contexts are checked against the templates by the report's
    contract tests and tests/test_assess_structure.py)."""
    made, lenient = [], []
    for module, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if not (name.endswith("Environment") or (
                    name == "__init__" and isinstance(func, ast.Attribute)
                    and isinstance(func.value, ast.Call)
                    and getattr(func.value.func, "id", "") == "super"
                    and "Environment" in path.read_text())):
                continue
            if name == "__init__" and not any(k.arg == "autoescape" for k in node.keywords):
                continue  # a super().__init__ of something else
            made.append(f"{module}:{node.lineno}")
            strict = [k for k in node.keywords if k.arg == "undefined"
                      and ast.unparse(k.value).endswith("StrictUndefined")]
            if not strict:
                lenient.append(f"{module}:{node.lineno}")
    assert len(made) >= 3 and lenient == [], (made, lenient)
