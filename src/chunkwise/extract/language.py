"""Language identification with langid (its model ships inside the package; nothing is downloaded)."""
from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def _identifier():
    from chunkwise.extract.langid_model import identifier

    ident = identifier(norm_probs=True)  # langid's model, decoded once per machine (langid_model)
    # Only living languages a document corpus plausibly holds: langid's full set (97) labels short
    # technical English as Latin or Esperanto now and then.
    ident.set_languages(LANGUAGES)
    return ident


LANGUAGES = ("en de fr es it pt nl sv da no fi pl cs sk sl hr sr bg ru uk el tr hu ro lt lv et "
             "ja zh ko ar he fa hi bn ur th vi id ms").split()


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
