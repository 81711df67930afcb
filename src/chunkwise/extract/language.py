"""Language identification with langid (its model ships inside the package; nothing is downloaded)."""
from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def _identifier():
    from langid.langid import LanguageIdentifier, model

    return LanguageIdentifier.from_modelstring(model, norm_probs=True)


def detect(text: str, sample: int = 20_000) -> tuple[str, float]:
    """ISO 639-1 code and probability for the first ``sample`` characters; ("und", 0) when the text
    is too short to tell or langid is not installed."""
    body = " ".join(text[:sample].split())
    if len(body) < 20:
        return "und", 0.0
    try:
        ident = _identifier()
    except ImportError:
        return "und", 0.0
    lang, prob = ident.classify(body)
    return lang, round(float(prob), 3)
