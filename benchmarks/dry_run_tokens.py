"""How far the dry run's token estimate is from real tokenizers, on the examples.

The dry run counts a request's text (tool definitions as JSON, system prompt, question) at
4 characters a token. This counts the same text of each example case with real tokenizers
where they are installed: OpenAI's cl100k_base and o200k_base (tiktoken; litellm ships
their files, so nothing is downloaded) and the Anthropic tokenizer file litellm ships
(read by the `tokenizers` package; Anthropic's current models tokenize differently, so it
is a rough guide). It prints each tokenizer's total beside the estimate, and the estimate's
error per case (estimate / real - 1): the mean and the worst.

    python benchmarks/dry_run_tokens.py        # ~5 s
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm fetches nothing

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"


def tokenizers() -> dict[str, Callable[[str], int]]:
    """The real tokenizers installed here (none: an empty table)."""
    found: dict[str, Callable[[str], int]] = {}
    try:
        import litellm.litellm_core_utils.tokenizers as bundled
    except ImportError:
        return found
    folder = Path(bundled.__file__).parent
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(folder))  # litellm's copies: no download
    try:
        import tiktoken

        for name in ("cl100k_base", "o200k_base"):
            try:
                enc = tiktoken.get_encoding(name)
            except Exception:  # not in the bundled cache: it would download
                continue
            found[f"tiktoken {name}"] = lambda text, enc=enc: len(enc.encode(text, disallowed_special=()))
    except ImportError:
        pass
    anthropic_file = folder / "anthropic_tokenizer.json"
    try:
        from tokenizers import Tokenizer

        if anthropic_file.is_file():
            tok = Tokenizer.from_file(str(anthropic_file))
            found["anthropic (litellm's file)"] = lambda text: len(tok.encode(text).ids)
    except ImportError:
        pass
    return found


def requests() -> list[str]:
    """Each example case's request text as the dry run counts it."""
    from pytest_toolselect.discovery.servers import offered_tools
    from pytest_toolselect.inputs.config import load_config
    from pytest_toolselect.lint.run import find_case_files, load_cases

    config = load_config(EXAMPLES)
    out = []
    for case in load_cases(find_case_files(config.root), config):
        names = case.servers if case.servers is not None else tuple(config.servers)
        tools, instructions = offered_tools([config.servers[n] for n in names], config.root,
                                            config.tool_name_format)
        system = case.system or config.system or instructions or ""
        out.append(json.dumps([t.to_dict() for t in tools], default=str) + system + case.question)
    return out


def main() -> int:
    from pytest_toolselect.run.dry_run import text_tokens

    texts = requests()
    estimate = [text_tokens(t) for t in texts]
    found = tokenizers()
    print(f"{len(texts)} example requests; estimate (4 characters a token): {sum(estimate):,} tokens")
    if not found:
        print("no real tokenizer installed (tiktoken, or tokenizers with litellm's file)")
    figures: dict[str, dict[str, float]] = {}
    print(f"{'tokenizer':<28} {'tokens':>9} {'mean error':>11} {'worst':>7}")
    for name, count in found.items():
        real = [count(t) for t in texts]
        errors = [e / r - 1 for e, r in zip(estimate, real, strict=True) if r]
        worst = max(errors, key=abs)
        figures[name] = {"tokens": sum(real), "mean_error": statistics.mean(errors), "worst": worst}
        print(f"{name:<28} {sum(real):>9,} {statistics.mean(errors):>+10.1%} {worst:>+7.1%}")
    print(json.dumps({"requests": len(texts), "estimate": sum(estimate), "tokenizers": figures}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
