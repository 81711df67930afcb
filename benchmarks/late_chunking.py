"""Late chunking vs plain chunk embeddings on a generated pronoun-heavy corpus (issue 5, item 8).

Why: a chunk such as "The company employs 3,200 people." names no company; embedded alone, its
vector is the same for every company in the index, and a question naming the company cannot pick
it out. Late chunking pools the chunk's vector from a transformer pass over its surrounding window,
which may include the sentence that named the company. This harness measures how much that helps,
and where it cannot (the name outside the chunk's window).

Corpus (deterministic, ``--seed``): ``--docs`` documents, half about fictional companies, half
about fictional people, with invented names (syllable soup, so the model knows nothing of them).
Each document names its entity once, in its first paragraph, and then gives 5-8 facts in their own
paragraphs that refer to it only as "it", "they", "the company", "she", "her", ... in varied
wording, with up to 0, 2, 5 or 8 fact-free paragraphs (per document) between two facts, so that
documents run from ~70 to ~730 tokens and some facts sit beyond the first 254. Fact values come
from shared pools, so the same city or year appears in many documents.

Questions: for every document, three questions about pronoun-only facts ("How many people work for
Quorvane Systems?") and one about the naming paragraph ("When was Quorvane Systems founded?", a
control). A question's gold chunk is the chunk holding its fact's paragraph; a question counts as
*pronoun-only* when that chunk does not contain the entity's name.

Method: chunks from chunkwise (``strategy="paragraphs"``, ``--size`` MiniLM tokens, default 48:
mostly one paragraph per chunk; short neighbours are packed together, so some fact paragraphs share
the naming chunk and their questions are not pronoun-only). All chunks of all documents form one
index; questions are embedded with plain MiniLM (late vectors live in the same space); ranking by
cosine; recall@1 and recall@5 (gold chunk among the top k), MRR@10, and how often the top hit comes
from the gold document at all. Contenders: **plain** (each chunk's text embedded alone, as
sentence-transformers runs all-MiniLM-L6-v2); **plain + title header** (the entity's name on a line
before each chunk: chunkwise's ``--header title`` when the title is the name, the cheap alternative
seed 001 measures); **late 256/64** (``plan_late`` per document with 256-token windows,
[CLS]/[SEP] included, 64 tokens of overlap, as ``ingest(embed_mode="late")`` plans them; then
``encode_plans`` runs the windows of all documents in shared batches of 16) and **late 512/128** (windows up to
MiniLM's 512 position embeddings, beyond the 256 tokens it was tuned on). Results are split by
whether the gold chunk ends within the document's first 254 tokens, i.e. inside the window that
read the name. Time is the wall time of embedding the whole index, model loaded and warmed first;
"tokens encoded" counts every position the transformer ran over.

Run: ``HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/late_chunking.py [--docs 60] [--seed 7]
[--size 48] [--json FILE]``
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from _timing import timed  # noqa: E402

SYLLABLES = ["vel", "tra", "quor", "bex", "ali", "dun", "mar", "zen", "ost", "rik", "pal", "ven", "tor",
             "sca", "lin", "dro", "ka", "mi", "nor", "sel", "gav", "ul", "pre", "fin", "sko", "ar"]
SUFFIXES = ["Systems", "Labs", "Works", "Dynamics", "Foods", "Logistics", "Textiles", "Robotics"]
SECTORS = ["farm machinery", "medical software", "frozen food", "rail logistics", "outdoor clothing",
           "industrial robots", "water pumps", "solar panels"]
FIRST = ["Ilse", "Tomas", "Greta", "Anouk", "Pavel", "Mirela", "Joris", "Selin", "Oskar", "Nadia"]
PROFESSIONS = ["architect", "novelist", "glass artist", "marine biologist", "composer", "photographer"]
CITIES = ["Tromsø", "Ghent", "Porto", "Brno", "Tartu", "Aarhus", "Graz", "Lyon", "Bilbao", "Turku",
          "Kraków", "Utrecht", "Basel", "Genoa", "Cork", "Malmö"]
BUILDINGS = ["textile mill", "railway depot", "brewery", "post office", "harbour warehouse"]
PRODUCTS = [("Ferro 9", "compact tractor"), ("Nimbus", "cloud scheduling tool"), ("Polar Pack", "frozen meal box"),
            ("Railhawk", "freight tracking unit"), ("Driftline", "waterproof jacket"), ("Arm-6", "welding robot"),
            ("Cascade", "borehole pump"), ("Sunleaf", "roof panel")]
AWARDS = ["Nordic Design Prize", "Hansa Innovation Award", "Golden Cog", "Blue Ribbon of Industry"]
TECH = ["battery cooling", "sensor fusion", "low-energy freezing", "route planning", "recycled fibres"]
THINGS = ["gearboxes", "barcode scanners", "spice blends", "cargo drones", "zip fasteners", "valves"]
SUBJECTS = ["physics", "history of art", "marine ecology", "music theory", "civil engineering"]
HOBBIES = ["restores old sailing boats", "keeps bees on a rooftop", "runs mountain marathons",
           "collects antique maps", "plays the cello in an amateur orchestra"]
SKILLS = ["patience", "how to read a landscape", "the value of drafts", "to listen before speaking"]


def name_from(rng: random.Random, used: set[str] | None, parts: int) -> str:
    """An invented word; unique among ``used`` when given (entity names: 3 syllables, 17,576 of
    them; side names: 2 syllables, repeats allowed, never equal to an entity name)."""
    while True:
        word = "".join(rng.choice(SYLLABLES) for _ in range(parts)).capitalize()
        if used is None:
            return word
        if word not in used:
            used.add(word)
            return word


# (fact, question templates, paragraph templates): paragraphs never name the entity.
COMPANY_FACTS = [
    ("employees", ["How many people work for {name}?", "How many employees does {name} have?"],
     ["The company employs {n} people. Most of them work at its main plant.",
      "It has grown to {n} employees, a third of them engineers.",
      "They now have a staff of {n}, twice as many as ten years ago."]),
    ("hq", ["Where is {name} headquartered?", "In which city is the head office of {name}?"],
     ["Its headquarters are in {city}, in a converted {building}.",
      "The firm later moved its head office to {city}; it still sits in an old {building} there."]),
    ("product", ["What is the best-known product of {name}?", "Which product made {name} famous?"],
     ["Its best-known product is the {product}, a {desc}.",
      "They became famous for the {product}, a {desc} that still sells well."]),
    ("revenue", ["What revenue did {name} report last year?", "How much money did {name} make last year?"],
     ["Last year it reported revenue of {r} million euros, up from the year before.",
      "The company's revenue reached {r} million euros last year."]),
    ("ceo", ["Who runs {name}?", "Who is the chief executive of {name}?"],
     ["It is run by {person}, who took over as chief executive in {y}.",
      "Since {y} the firm has been led by {person}."]),
    ("acquisition", ["Which company did {name} acquire?", "What did {name} buy to expand?"],
     ["In {y} the company bought {other}, a small maker of {things}.",
      "They acquired {other} in {y} to expand into {things}."]),
    ("exports", ["How many countries does {name} export to?", "In how many countries does {name} sell?"],
     ["Today it sells to customers in {k} countries.", "Its products are exported to {k} countries."]),
    ("patents", ["How many patents does {name} hold?", "What are the patents of {name} about?"],
     ["The firm holds {k} patents, most of them on {tech}.", "They own {k} patents, mainly covering {tech}."]),
    ("factory", ["Where did {name} open its second factory?", "Where is the second plant of {name}?"],
     ["Its second factory opened in {city} in {y}, close to the railway.",
      "A second plant followed in {city} in {y}; the company chose it for the port."]),
    ("award", ["Which award did {name} win?", "What prize was {name} given?"],
     ["In {y} it won the {award} for its work on {tech}.", "The company received the {award} in {y}."]),
]
PERSON_FACTS = [
    ("study", ["Where did {name} study?", "What did {name} study at university?"],
     ["{She} studied {subject} at the University of {city}.",
      "As a student {she} read {subject} in {city}, graduating with honours."]),
    ("prize", ["Which prize did {name} receive?", "What award was given to {name}?"],
     ["{She} received the {award} in {y}.", "In {y} {her} work was honoured with the {award}."]),
    ("home", ["Where does {name} live today?", "In which city is {name} living now?"],
     ["Today {she} lives in {city} with two dogs.", "These days {she} makes {her} home in {city}."]),
    ("job", ["Where did {name} work before going independent?", "Who employed {name} before?"],
     ["Before going independent, {she} worked for {k} years at {other}.",
      "For {k} years {she} was on the staff of {other}."]),
    ("hobby", ["What does {name} do in free time?", "What is the hobby of {name}?"],
     ["In {her} spare time {she} {hobby}.", "Away from work, {she} {hobby}."]),
    ("mentor", ["Who was the mentor of {name}?", "Who taught {name} early on?"],
     ["{Her} mentor was {person}, who taught {him} {skill}.",
      "Early on {she} learned {skill} from {person}."]),
    ("first", ["What was the first major work of {name}?", "When did {name} have a first success?"],
     ["{Her} first major work, {product}, appeared in {y}.", "{She} had a first success in {y} with {product}."]),
]
FILLER = ["Little else is recorded about those early years, and the archives that survive say little more.",
          "Reports from that time are short and dry; most of them list dates and nothing else.",
          "Not every plan worked out, and some were dropped quickly once the money ran short.",
          "Colleagues describe the atmosphere as calm and focused, with long meetings on Mondays.",
          "The following years brought slow, steady change rather than any single turning point.",
          "Local newspapers covered the story now and then, usually on the business pages."]


@dataclass(frozen=True)
class Question:
    doc: int
    question: str
    start: int  # the fact paragraph in the document
    end: int
    named: bool  # control: the fact is in the paragraph that names the entity


def values(rng: random.Random) -> dict:
    product, desc = rng.choice(PRODUCTS)
    return {"n": f"{rng.randrange(80, 9000):,}", "city": rng.choice(CITIES), "building": rng.choice(BUILDINGS),
            "product": product, "desc": desc, "r": rng.randrange(5, 900), "y": rng.randrange(1990, 2023),
            "person": f"{rng.choice(FIRST)} {name_from(rng, None, 2)}", "k": rng.randrange(3, 60),
            "other": f"{name_from(rng, None, 2)} {rng.choice(SUFFIXES)}", "things": rng.choice(THINGS),
            "tech": rng.choice(TECH), "award": rng.choice(AWARDS), "subject": rng.choice(SUBJECTS),
            "hobby": rng.choice(HOBBIES), "skill": rng.choice(SKILLS)}


def make_corpus(n_docs: int, seed: int) -> tuple[list[str], list[str], list[Question]]:
    """Documents, their entity names, and questions (three pronoun-fact ones and one control each)."""
    rng = random.Random(seed)
    used: set[str] = set()
    docs, names, questions = [], [], []
    for d in range(n_docs):
        company = d % 2 == 0
        if company:
            name = f"{name_from(rng, used, 3)} {rng.choice(SUFFIXES)}"
            intro = (f"{name} is a {rng.choice(SECTORS)} company founded in {rng.choice(CITIES)} in "
                     f"{rng.randrange(1950, 2015)} by {rng.choice(FIRST)} {name_from(rng, None, 2)}.")
            control = rng.choice([f"When was {name} founded?", f"Who founded {name}?"])
            facts, pron = COMPANY_FACTS, {}
        else:
            she = rng.random() < 0.5
            name = f"{rng.choice(FIRST)} {name_from(rng, used, 3)}"
            intro = (f"{name} is a {rng.choice(PROFESSIONS)} born in {rng.choice(CITIES)} in "
                     f"{rng.randrange(1940, 2000)}.")
            control = rng.choice([f"Where was {name} born?", f"What is the profession of {name}?"])
            facts = PERSON_FACTS
            pron = {"she": "she" if she else "he", "her": "her" if she else "his",
                    "him": "her" if she else "him", "She": "She" if she else "He", "Her": "Her" if she else "His"}
        chosen = rng.sample(facts, rng.randint(5, min(8, len(facts))))
        paragraphs = [(intro, None)]
        wordy = rng.choice([0, 2, 5, 8])  # most fact-free paragraphs between two facts: the document's length
        for fact in chosen:
            for _ in range(rng.randint(0, wordy)):
                paragraphs.append((rng.choice(FILLER), None))
            text = rng.choice(fact[2]).format(**values(rng), **pron)
            paragraphs.append((text[0].upper() + text[1:], fact))
        text, spans = "", []
        for para, fact in paragraphs:
            spans.append((len(text), len(text) + len(para), fact))
            text += para + "\n\n"
        docs.append(text)
        names.append(name)
        s, e, _ = spans[0]
        questions.append(Question(d, control, s, e, True))
        for s, e, fact in rng.sample([x for x in spans if x[2] is not None], 3):
            questions.append(Question(d, rng.choice(fact[1]).format(name=name), s, e, False))
    return docs, names, questions


def gold_chunk(chunks, q: Question) -> int:
    """Index (within the document's chunks) of the chunk holding the question's paragraph."""
    for i, c in enumerate(chunks):
        if c.start_char <= q.start and q.end <= c.end_char:
            return i
    raise AssertionError(f"no chunk holds paragraph [{q.start}, {q.end}) of document {q.doc}")


def evaluate(vectors, qvecs, golds, doc_of):
    """Per question: recall@1, recall@5, MRR@10 of the gold chunk and whether the top hit is from
    the gold chunk's document (did the vector find the entity at all?), by cosine over unit vectors."""
    import numpy as np

    m = np.asarray(vectors, dtype=np.float32)
    out = []
    for qv, g in zip(qvecs, golds):
        scores = m @ np.asarray(qv, dtype=np.float32)
        top = np.argsort(-scores, kind="stable")[:10].tolist()
        rank = top.index(g) + 1 if g in top else None
        out.append((rank == 1, rank is not None and rank <= 5, 1 / rank if rank else 0.0,
                    doc_of[top[0]] == doc_of[g]))
    return out


def summarise(rows, mask) -> dict:
    """Means over the questions ``mask`` keeps (None when it keeps none: a small ``--docs`` may have
    no gold chunk beyond the first window)."""
    picked = [r for r, keep in zip(rows, mask) if keep]
    n = len(picked)
    mean = (lambda i: sum(r[i] for r in picked) / n) if n else (lambda i: None)
    return {"n": n, "r@1": mean(0), "r@5": mean(1), "mrr@10": mean(2), "doc@1": mean(3)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--docs", type=int, default=60)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--size", type=int, default=48, help="chunk cap in MiniLM tokens (paragraphs strategy)")
    p.add_argument("--json", help="write the figures here")
    args = p.parse_args(argv)

    from chunkwise import api
    from chunkwise.embed import make_embedder
    from chunkwise.embed.late import LateEncoder

    docs, names, questions = make_corpus(args.docs, args.seed)
    chunker = api.make_chunker(strategy="paragraphs", size=args.size)
    per_doc = [chunker.chunk(t) for t in docs]
    index = [(d, i) for d, cs in enumerate(per_doc) for i in range(len(cs))]
    where = {key: n for n, key in enumerate(index)}
    golds, pronoun, near = [], [], []
    emb = make_embedder("minilm")
    enc = LateEncoder(emb)
    for q in questions:
        chunks = per_doc[q.doc]
        g = gold_chunk(chunks, q)
        golds.append(where[(q.doc, g)])
        pronoun.append(not q.named and names[q.doc] not in chunks[g].text)
        near.append(len(enc.tokenize(docs[q.doc][: chunks[g].end_char])[0]) <= 254)
    tokens = [len(enc.tokenize(t)[0]) for t in docs]
    emb.embed(["warm up"])
    qvecs = emb.embed([q.question for q in questions])

    texts = {"plain": [c.text for cs in per_doc for c in cs],
             "plain + title header": [f"{names[d]}\n{c.text}" for d, cs in enumerate(per_doc) for c in cs]}
    contenders = {
        "plain": lambda: emb.embed(texts["plain"]),
        # The cheap alternative (seed 001 block 8): the document title, here the entity's name, as a
        # contextual header in every chunk's embedded text.
        "plain + title header": lambda: emb.embed(texts["plain + title header"]),
        "late 256/64": lambda: late_all(docs, per_doc, enc, 256, 64),
        "late 512/128": lambda: late_all(docs, per_doc, enc, 512, 128),
    }
    report = {"docs": len(docs), "chunks": len(index), "questions": len(questions),
              "pronoun_only": sum(pronoun), "control": sum(q.named for q in questions),
              "doc_tokens": {"min": min(tokens), "mean": round(sum(tokens) / len(tokens)), "max": max(tokens)},
              "pronoun_near": sum(p and n for p, n in zip(pronoun, near)), "results": {}}
    for label, run in contenders.items():
        wall, cpu, out = timed(run)
        plain = label.startswith("plain")
        vectors = out if plain else [v.vector for v in out[0]]
        passes = len(index) if plain else out[1]
        encoded = sum(emb.count_tokens(texts[label])) if plain else out[2]  # [CLS]/[SEP] counted
        rows = evaluate(vectors, qvecs, golds, [d for d, _ in index])
        report["results"][label] = {
            "seconds": round(wall, 2), "cpu_seconds": round(cpu, 2), "passes": passes, "tokens": encoded,
            "pronoun-only": summarise(rows, pronoun),
            "pronoun, gold in first 254 tokens": summarise(rows, [p and n for p, n in zip(pronoun, near)]),
            "pronoun, gold beyond": summarise(rows, [p and not n for p, n in zip(pronoun, near)]),
            "control (named)": summarise(rows, [q.named for q in questions]),
        }
    print(json.dumps({k: v for k, v in report.items() if k != "results"}))
    print("| contender | questions | n | recall@1 | recall@5 | MRR@10 | top hit in gold doc |")
    print("|---|---|--:|--:|--:|--:|--:|")
    for label, res in report["results"].items():
        for group, s in res.items():
            if isinstance(s, dict):
                f = lambda x: "—" if x is None else f"{x:.3f}"  # noqa: E731
                print(f"| {label} | {group} | {s['n']} | {f(s['r@1'])} | {f(s['r@5'])} | {f(s['mrr@10'])} "
                      f"| {f(s['doc@1'])} |")
    print("| contender | encoder passes | tokens encoded | seconds | cpu s |")
    print("|---|--:|--:|--:|--:|")
    for label, res in report["results"].items():
        print(f"| {label} | {res['passes']} | {res['tokens']} | {res['seconds']} | {res['cpu_seconds']} |")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0


def late_all(docs, per_doc, enc, window: int, overlap: int):
    """Late vectors of every chunk (plans first, then every document's windows in shared batches,
    as plain embedding batches chunks across documents), the windows encoded and their tokens
    ([CLS]/[SEP] included)."""
    from chunkwise.embed.late import encode_plans, plan_late

    plans = [plan_late(text, [(c.start_char, c.end_char) for c in chunks], model=enc, window_tokens=window,
                       overlap_tokens=overlap) for text, chunks in zip(docs, per_doc)]
    got = encode_plans([(p, range(len(p.picks))) for p in plans], enc)
    used = [{v.window.index: len(v.window.ids) + 2 for v in vs if v.window is not None} for vs in got]
    return [v for vs in got for v in vs], sum(map(len, used)), sum(sum(u.values()) for u in used)


if __name__ == "__main__":
    raise SystemExit(main())
