"""The poisoning rules on the test corpora: poisoned tool sets caught, ordinary tools flagged.

Reads ``tests/poison_data.py`` (each attack class in several wordings and languages, and
evasions of them) and the ordinary descriptions beside it (plus the examples' servers, read
from their source, and the clean corpus of real servers' tool lists,
``tests/clean_corpus.json``), and prints the figures both ways, per rule, and the rules'
time per 1,000 tools.

    python benchmarks/lint_poisoning.py        # ~2 s
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]

from poison_data import ORDINARY, POISONED  # noqa: E402
from test_lint_corpora import corpus_toolset  # noqa: E402
from test_lint_poisoning import example_tools, poison  # noqa: E402

from pytest_toolselect.lint import poisoning  # noqa: E402


def main() -> None:
    caught, total = Counter(), Counter()
    missed = []
    for rule, label, tools, others in POISONED:
        total[rule] += 1
        if rule in {f.rule for f in poison({"evil": tools, **others}) if "evil" in f.servers}:
            caught[rule] += 1
        else:
            missed.append(f"{rule}: {label}")
    for rule in sorted(total):
        print(f"{rule:26} caught {caught[rule]}/{total[rule]}")
    print(f"{'poisoned tool sets':26} caught {sum(caught.values())}/{len(POISONED)}"
          + (f"; missed {missed}" if missed else ""))
    servers = {"plain": ORDINARY, **example_tools()}
    tools = sum(len(t) for t in servers.values())
    flagged = {f.tools for f in poison(servers)}
    print(f"{'ordinary tools':26} flagged {len(flagged)}/{tools}")
    corpus = corpus_toolset()
    found = [*poisoning.hidden_text(corpus), *poisoning.model_instructions(corpus),
             *poisoning.secret_seeking_parameters(corpus), *poisoning.cross_server_shadowing(corpus)]
    n = sum(len(t) for t in corpus.servers.values())
    errors = {(f.servers, f.tools) for f in found if f.severity == "error"}
    warned = {(f.servers, f.tools) for f in found if f.severity == "warning"} - errors
    print(f"{'clean corpus tools':26} errors on {len(errors)}/{n}, warnings on {len(warned)} "
          f"({len(corpus.servers)} servers, {len(corpus.instructions)} with instructions)")
    many = {"s": [t for _ in range(1000 // len(ORDINARY) + 1) for t in ORDINARY][:1000]}
    start = time.perf_counter()
    poison(many)
    print(f"{'1,000 ordinary tools':26} {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
