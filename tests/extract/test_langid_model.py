"""``langid_model.identifier`` is langid's ``from_modelstring`` identifier, whether it was decoded
now or read from the cache, and a damaged or unwritable cache changes nothing but the time."""
from __future__ import annotations

import functools

import pytest

np = pytest.importorskip("numpy")
langid = pytest.importorskip("langid.langid")

from chunkwise.extract import langid_model  # noqa: E402

TEXTS = ("The harbour ledger was kept by hand for a century.", "Le registre du port fut tenu à la main.",
         "Das Hafenbuch wurde ein Jahrhundert lang von Hand geführt.", "港の台帳は百年間手書きで記録された。")


@pytest.fixture(scope="module")
def theirs():
    ident = langid.LanguageIdentifier.from_modelstring(langid.model, norm_probs=True)
    return ident


@pytest.fixture(scope="module")
def decoded():
    return langid_model._decode(langid.model)  # once: it is the slow part


@pytest.fixture
def cache(tmp_path, monkeypatch, decoded):
    calls = []
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(langid_model, "_decode", lambda model: calls.append(1) or decoded)
    return calls


def _same(ours, theirs) -> None:
    assert np.array_equal(ours.nb_ptc, theirs.nb_ptc) and ours.nb_ptc.dtype == theirs.nb_ptc.dtype
    assert np.array_equal(ours.nb_pc, theirs.nb_pc) and ours.nb_pc.dtype == theirs.nb_pc.dtype
    assert ours.nb_numfeats == theirs.nb_numfeats and ours.nb_classes == theirs.nb_classes
    assert ours.tk_nextmove == theirs.tk_nextmove and ours.tk_output == theirs.tk_output
    for text in TEXTS:
        assert ours.classify(text) == theirs.classify(text)


def test_decoded_once_then_read_back_the_same(cache, theirs):
    _same(langid_model.identifier(), theirs)
    assert len(cache) == 1 and len(list(langid_model.cache_dir().glob("model-*.bin"))) == 1
    _same(langid_model.identifier(), theirs)
    assert len(cache) == 1  # the second process reads the cache


@pytest.mark.parametrize("damage", [lambda b: b[:-7], lambda b: b[:40], lambda b: b"x" + b[1:],
                                    lambda b: b.replace(b'"ptc", "f"', b'"ptc", "d"', 1), lambda b: b + b"\0"])
def test_a_damaged_cache_is_decoded_again_and_replaced(cache, theirs, damage):
    langid_model.identifier()
    path = next(langid_model.cache_dir().glob("model-*.bin"))
    path.write_bytes(damage(path.read_bytes()))
    _same(langid_model.identifier(), theirs)
    assert len(cache) == 2
    _same(langid_model.identifier(), theirs)
    assert len(cache) == 2  # rewritten whole


def test_an_unwritable_cache_costs_only_time(cache, theirs, tmp_path, monkeypatch):
    (tmp_path / "file").write_text("not a directory")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))
    _same(langid_model.identifier(), theirs)
    _same(langid_model.identifier(), theirs)
    assert len(cache) == 2
