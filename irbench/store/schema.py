"""The store's schema: every migration in order (each recorded in ``migrations``)."""

from __future__ import annotations

MIGRATIONS: list[tuple[str, str]] = [
    ("create the score store", """
    CREATE TABLE files (
        path VARCHAR PRIMARY KEY, size BIGINT, mtime_ns BIGINT, sha256 VARCHAR);
    CREATE TABLE runner_runs (
        runner_id INTEGER PRIMARY KEY, config_path VARCHAR, config_sha256 VARCHAR,
        irbench_version VARCHAR, options VARCHAR, environment VARCHAR,
        started_at TIMESTAMP, finished_at TIMESTAMP, status VARCHAR,
        evaluated INTEGER, reused INTEGER, failed INTEGER);
    CREATE TABLE topics (query_id VARCHAR PRIMARY KEY, text VARCHAR, position INTEGER);
    CREATE TABLE qrels_sets (
        name VARCHAR PRIMARY KEY, path VARCHAR, sha256 VARCHAR, num_topics INTEGER,
        num_judged BIGINT, num_relevant BIGINT, max_level INTEGER, level_counts BIGINT[],
        topics VARCHAR[], topics_sha256 VARCHAR, status VARCHAR, error VARCHAR,
        runner_id INTEGER);
    CREATE TABLE systems (
        name VARCHAR PRIMARY KEY, path VARCHAR, sha256 VARCHAR, run_tag VARCHAR,
        "group" VARCHAR, type VARCHAR, description VARCHAR, baseline BOOLEAN,
        metadata VARCHAR, status VARCHAR, error VARCHAR, runner_id INTEGER,
        num_topics INTEGER, num_docs BIGINT, answered VARCHAR[]);
    CREATE TABLE measures (
        measure VARCHAR PRIMARY KEY, family VARCHAR, aggregate VARCHAR, description VARCHAR);
    CREATE TABLE suites (
        suite VARCHAR, measure VARCHAR, position INTEGER, PRIMARY KEY (suite, measure));
    CREATE TABLE evaluations (
        evaluation_id INTEGER PRIMARY KEY, run_sha256 VARCHAR, qrels_sha256 VARCHAR,
        options VARCHAR, irbench_version VARCHAR, runner_id INTEGER,
        UNIQUE (run_sha256, qrels_sha256, options, irbench_version));
    CREATE TABLE summaries (
        evaluation_id INTEGER, measure VARCHAR, value DOUBLE, num_topics INTEGER,
        runner_id INTEGER, PRIMARY KEY (evaluation_id, measure));
    CREATE TABLE scores (
        evaluation_id INTEGER, measure VARCHAR, query_id VARCHAR, value DOUBLE);
    CREATE TABLE current (
        system VARCHAR, qrels VARCHAR, evaluation_id INTEGER, PRIMARY KEY (system, qrels));
    CREATE VIEW per_query AS
        SELECT c.system, c.qrels, s.measure, s.query_id, s.value
        FROM current c JOIN scores s USING (evaluation_id);
    CREATE VIEW means AS
        SELECT c.system, c.qrels, m.measure, m.value, m.num_topics
        FROM current c JOIN summaries m USING (evaluation_id);
    """),
    ("run metadata and submission checks", """
    ALTER TABLE systems ADD COLUMN official BOOLEAN;
    ALTER TABLE systems ADD COLUMN priority INTEGER;
    ALTER TABLE systems ADD COLUMN ir_metadata VARCHAR;
    ALTER TABLE systems ADD COLUMN validation VARCHAR;
    ALTER TABLE systems ADD COLUMN problems VARCHAR;
    """),
    ("pools judged over days", """
    CREATE TABLE pools (
        name VARCHAR PRIMARY KEY, strategy VARCHAR, state VARCHAR, arrays BLOB,
        created_at TIMESTAMP, updated_at TIMESTAMP);
    CREATE TABLE judgments (
        pool VARCHAR, query_id VARCHAR, doc_id VARCHAR, relevance INTEGER, batch INTEGER,
        source VARCHAR, judged_at TIMESTAMP);
    """),
    ("built pools with provenance", """
    CREATE TABLE pool_docs (
        pool VARCHAR, query_id VARCHAR, doc_id VARCHAR, sampled BOOLEAN, inclusion DOUBLE,
        stratum INTEGER, position INTEGER);
    CREATE TABLE pool_provenance (
        pool VARCHAR, query_id VARCHAR, doc_id VARCHAR, run VARCHAR, "group" VARCHAR,
        rank INTEGER);
    CREATE TABLE pool_builds (
        pool VARCHAR PRIMARY KEY, strategy VARCHAR, params VARCHAR, seed INTEGER,
        built_at TIMESTAMP);
    """),
    ("analyses kept for reports", """
    CREATE TABLE analyses (
        key VARCHAR PRIMARY KEY, kind VARCHAR, result VARCHAR, created_at TIMESTAMP);
    """),
    ("diversity qrels sets", """
    ALTER TABLE qrels_sets ADD COLUMN kind VARCHAR DEFAULT 'adhoc';
    ALTER TABLE qrels_sets ADD COLUMN intent_weights VARCHAR;
    ALTER TABLE qrels_sets ADD COLUMN intent_weights_sha256 VARCHAR;
    """),
    ("the campaign a store belongs to", """
    CREATE TABLE campaign (
        name VARCHAR PRIMARY KEY, config_path VARCHAR, claimed_at TIMESTAMP);
    """),
    ("which systems were pooled", """
    ALTER TABLE systems ADD COLUMN pooled BOOLEAN;
    """),
    # Migration 1 was once edited in place (three qrels_sets columns added): stores made by
    # its first form were stamped as migrated without them. Never edit an applied migration;
    # tests/test_store_robustness.py pins each one's text.
    ("repair stores made by the first schema", """
    ALTER TABLE qrels_sets ADD COLUMN IF NOT EXISTS level_counts BIGINT[];
    ALTER TABLE qrels_sets ADD COLUMN IF NOT EXISTS topics VARCHAR[];
    ALTER TABLE qrels_sets ADD COLUMN IF NOT EXISTS topics_sha256 VARCHAR;
    """),
    ("the report's profiles and analyses with their parameters", """
    CREATE TABLE IF NOT EXISTS profiles (
        evaluation_id INTEGER, measure VARCHAR, value DOUBLE, PRIMARY KEY (evaluation_id, measure));
    ALTER TABLE analyses ADD COLUMN IF NOT EXISTS params VARCHAR;
    ALTER TABLE systems ADD COLUMN IF NOT EXISTS position INTEGER;
    """),
    ("judgments that know their judge; model judges' answers and usage", """
    ALTER TABLE judgments ADD COLUMN IF NOT EXISTS judge VARCHAR;
    ALTER TABLE judgments ADD COLUMN IF NOT EXISTS judge_kind VARCHAR;
    ALTER TABLE judgments ADD COLUMN IF NOT EXISTS model VARCHAR;
    ALTER TABLE judgments ADD COLUMN IF NOT EXISTS prompt_sha256 VARCHAR;
    ALTER TABLE judgments ADD COLUMN IF NOT EXISTS answer VARCHAR;
    UPDATE judgments SET judge = 'assessor', judge_kind = 'human' WHERE judge IS NULL;
    CREATE TABLE IF NOT EXISTS model_answers (
        model VARCHAR, prompt_sha256 VARCHAR, query_id VARCHAR, doc_id VARCHAR,
        judge VARCHAR, answer VARCHAR, relevance INTEGER, prompt_tokens BIGINT,
        completion_tokens BIGINT, seconds DOUBLE, answered_at TIMESTAMP,
        PRIMARY KEY (model, prompt_sha256, query_id, doc_id));
    CREATE TABLE IF NOT EXISTS judges (
        name VARCHAR PRIMARY KEY, kind VARCHAR, model VARCHAR, base_url VARCHAR,
        settings VARCHAR, updated_at TIMESTAMP);
    """),
    ("qrels sets written from the store's judgments", """
    CREATE TABLE IF NOT EXISTS qrels_made (
        sha256 VARCHAR PRIMARY KEY, path VARCHAR, rule VARCHAR, judges VARCHAR[],
        kinds VARCHAR[], models VARCHAR[], made_at TIMESTAMP);
    """),
    ("assessors in the browser", """
    CREATE TABLE IF NOT EXISTS assessors (
        name VARCHAR PRIMARY KEY, token_sha256 VARCHAR UNIQUE, role VARCHAR, topics VARCHAR[],
        pool VARCHAR, created_at TIMESTAMP);
    ALTER TABLE judgments ADD COLUMN IF NOT EXISTS suggested INTEGER;
    ALTER TABLE judgments ADD COLUMN IF NOT EXISTS seconds DOUBLE;
    """),
    ("a pool's state saved with the clicks it has applied", """
    ALTER TABLE pools ADD COLUMN IF NOT EXISTS clicks_applied BIGINT DEFAULT 0;
    """),
    # a base_url with user:password@, ?key= or a fragment is refused by the config check now;
    # a store written before that keeps no credential either (issue 35)
    ("judges' base URLs without credentials", r"""
    UPDATE judges SET
        base_url = regexp_replace(regexp_replace(base_url, '^(https?://)[^/?#]*@', '\1'),
                                  '[?#].*$', ''),
        settings = regexp_replace(regexp_replace(settings,
                                  '("base_url": "https?://)[^/?#"]*@', '\1', 'g'),
                                  '("base_url": "[^"?#]*)[?#][^"]*"', '\1"', 'g');
    """),
    # a model's answers are keyed by the endpoint (the judge's base_url as the judges table
    # keeps it) too: two servers serving models of one name never share answers. Answers stored
    # before take their judge's base_url, or 'unknown' (no base_url: an http(s) URL) when the
    # store does not know it. requests: the HTTP requests an answer took, retries included;
    # NULL (unknown) for answers stored before (issue 37). DuckDB cannot alter a primary key:
    # a new table, filled, then renamed.
    ("model answers keyed by their endpoint, with the HTTP requests each took", """
    CREATE TABLE model_answers_by_endpoint (
        model VARCHAR, endpoint VARCHAR, prompt_sha256 VARCHAR, query_id VARCHAR,
        doc_id VARCHAR, judge VARCHAR, answer VARCHAR, relevance INTEGER, prompt_tokens BIGINT,
        completion_tokens BIGINT, seconds DOUBLE, answered_at TIMESTAMP, requests INTEGER,
        PRIMARY KEY (model, endpoint, prompt_sha256, query_id, doc_id));
    INSERT INTO model_answers_by_endpoint
        SELECT a.model, coalesce(nullif(j.base_url, ''), 'unknown'), a.prompt_sha256,
               a.query_id, a.doc_id, a.judge, a.answer, a.relevance, a.prompt_tokens,
               a.completion_tokens, a.seconds, a.answered_at, NULL
        FROM model_answers a LEFT JOIN judges j ON j.name = a.judge;
    DROP TABLE model_answers;
    ALTER TABLE model_answers_by_endpoint RENAME TO model_answers;
    """),
    # issue 37: an open page keeps working after a restart (the CSRF secret is the pool's, not
    # the process's); an assessor revoked keeps their row (judgments name them), without a token
    ("sign-ins that survive a restart", """
    CREATE TABLE IF NOT EXISTS assess_secrets (
        pool VARCHAR PRIMARY KEY, csrf_secret BLOB, created_at TIMESTAMP);
    ALTER TABLE assessors ADD COLUMN IF NOT EXISTS revoked_at TIMESTAMP;
    """),
    # Before migration 16 a judge took any stored answer of its model name, whatever server
    # gave it: judge B (another server) recorded judge A's answers as its labels, and a rerun
    # of B, which now asks its own server, could not replace them (one judgment per judge and
    # request). Removed here: a model judgment of judge J whose answer is certainly borrowed,
    # that is (1) J's base_url is known (judges), (2) the store holds no answer of the
    # judgment's model to its request at J's endpoint (after migration 16 every answer J itself
    # got sits there: it took its judge's base_url), (3) it holds one at another known
    # endpoint (not 'unknown': an answer whose server the store cannot name may be J's own
    # server's) with the judgment's very answer text, and (4) J's config (settings) does not
    # name that endpoint or the answer's judge in reuse_answers_from (reused on purpose, as
    # migration 16 allows). Human judges, imported labels (no request sha256) and judges whose
    # base_url is unknown are not touched. J's next run asks its own server for those pairs
    # and records its own labels (issue 37).
    ("model judgments made from another endpoint's answers removed", """
    DELETE FROM judgments j
    WHERE j.judge_kind = 'model' AND EXISTS (
        SELECT 1 FROM judges g JOIN model_answers o ON o.model = j.model
            AND o.prompt_sha256 = j.prompt_sha256 AND o.query_id = j.query_id
            AND o.doc_id = j.doc_id
        WHERE g.name = j.judge AND nullif(g.base_url, '') IS NOT NULL
            AND o.endpoint <> g.base_url AND o.endpoint <> 'unknown' AND o.answer = j.answer
            AND NOT coalesce(list_has_any(
                CASE WHEN json_valid(g.settings) THEN try_cast(json_extract(
                    g.settings, '$.reuse_answers_from') AS VARCHAR[]) END,
                [o.endpoint, o.judge]), false)
            AND NOT EXISTS (
                SELECT 1 FROM model_answers m WHERE m.model = j.model
                    AND m.endpoint = g.base_url AND m.prompt_sha256 = j.prompt_sha256
                    AND m.query_id = j.query_id AND m.doc_id = j.doc_id));
    """),
    ("answer runs among the systems", """
    ALTER TABLE systems ADD COLUMN IF NOT EXISTS kind VARCHAR;
    ALTER TABLE systems ADD COLUMN IF NOT EXISTS answer_format VARCHAR;
    """),
    # issue 40: labels of generated answers, one row per label a judge gave (the store's
    # irbench.store.answer_labels writes them). task 'support': does the cited segment
    # ``reference`` support the sentence ``sentence_text`` of an answer to ``query_id``;
    # run_id and sentence (its 0-based position in the run's answer) NULL when the label
    # serves every run writing that sentence citing that segment in that topic (the
    # support_shared key), given when it was made for one run's sentence (a judge that saw
    # the whole answer, an assessor). task 'nugget': whether the answer of run_id to
    # query_id holds the nugget whose id is ``reference`` (sentence_text and sentence NULL).
    # label: 2 / 1 / 0 (full / partial / none; support / partial_support / not_support).
    # The other columns are those of judgments: who judged (judge, judge_kind), for which
    # pool ('' none), from what (source), a model's model, request sha256 and raw answer.
    ("labels of generated answers: support and nugget judgments", """
    CREATE TABLE IF NOT EXISTS answer_labels (
        task VARCHAR NOT NULL, query_id VARCHAR NOT NULL, sentence_text VARCHAR,
        reference VARCHAR NOT NULL, run_id VARCHAR, sentence INTEGER, label INTEGER NOT NULL,
        judge VARCHAR NOT NULL, judge_kind VARCHAR NOT NULL, pool VARCHAR DEFAULT '',
        source VARCHAR, model VARCHAR, prompt_sha256 VARCHAR, answer VARCHAR,
        suggested INTEGER, seconds DOUBLE, judged_at TIMESTAMP);
    """),
    # issue 40: nugget lists, one row per version of a nugget (irbench.store.nuggets writes
    # them). ``judge``: the list the nugget belongs to (the nugget judge that made it: a desk
    # edit of that list stays in it); ``made_by``: who made this version (the model judge, or
    # the person editing), ``origin`` model or person. A live nugget has deleted_at NULL. An
    # edit never changes a row: it ends the rows it replaces (deleted_at, deleted_by) and adds
    # the new ones, each naming the ids it came from (``derived_from``): an edit one -> one, a
    # merge many -> one, a split one -> many, an add none -> one (origin person), a delete one
    # -> none. Nugget assignments (answer_labels, task 'nugget') name nugget_id, so a label
    # stays with the text it was made for.
    ("nugget lists, every version kept", """
    CREATE TABLE IF NOT EXISTS nuggets (
        query_id VARCHAR NOT NULL, nugget_id VARCHAR NOT NULL, text VARCHAR NOT NULL,
        importance VARCHAR NOT NULL, position INTEGER NOT NULL, origin VARCHAR NOT NULL,
        judge VARCHAR NOT NULL, made_by VARCHAR NOT NULL, derived_from VARCHAR[],
        created_at TIMESTAMP, deleted_at TIMESTAMP, deleted_by VARCHAR,
        PRIMARY KEY (nugget_id));
    """),
    # issue 41: systems given as commands (irbench.runner.produced writes the rows). One row
    # per execution of a system's command in this store's collection: ``key`` the command's
    # key (irbench.runner.commands.command_key: the command, its inputs' contents, the named
    # environment variables, the collection's inputs), ``status`` ok, failed, timeout or
    # no-output, the run it wrote (path and sha256, when ok), what it cost (wall and CPU
    # seconds, peak memory), the tail of its stderr, its argv and the platform (ir_metadata
    # fields, JSON). The latest ok row whose key is the command's current key, with its run
    # file unchanged, means the command is not executed again.
    ("systems given as commands: every execution", """
    CREATE TABLE IF NOT EXISTS commands (
        system VARCHAR NOT NULL, key VARCHAR NOT NULL, status VARCHAR NOT NULL,
        exit_code INTEGER, run_path VARCHAR, run_sha256 VARCHAR, wall_seconds DOUBLE,
        cpu_seconds DOUBLE, peak_rss_bytes BIGINT, stderr_tail VARCHAR, argv VARCHAR,
        environment VARCHAR, started_at TIMESTAMP, finished_at TIMESTAMP, runner_id INTEGER);
    """),
]
