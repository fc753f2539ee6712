"""Packing: exactly one [MASK] per (mention, candidate) pair, every score back to its pair, exact templates."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from transformers import AutoTokenizer, PreTrainedTokenizerFast

from core.documents import Document, Mention, Passage, document_from_title_abstract
from core.errors import InputError, ModelError
from core.rerank.cross_encoder import default_base_model
from core.rerank.packing import PACKING_LEVELS, Packer, scatter_scores

WORDS = "fever cough asthma anemia ataxia telangiectasia breast ovarian cancer tumour gene patients mutation".split()


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(default_base_model(), local_files_only=True)


def _document(
    sentences: list[list[int]], mention_words: list[tuple[int, int]], doc_id: str = "d"
) -> Document:
    """Sentences of WORDS indices; mentions given as (sentence, word position) pairs."""
    text_parts: list[str] = []
    word_spans: list[list[tuple[int, int]]] = []
    cursor = 0
    for words in sentences:
        spans = []
        for k, w in enumerate(words):
            if k:
                text_parts.append(" ")
                cursor += 1
            spans.append((cursor, cursor + len(WORDS[w])))
            text_parts.append(WORDS[w])
            cursor += len(WORDS[w])
        text_parts.append(". ")
        cursor += 2
        word_spans.append(spans)
    text = "".join(text_parts).rstrip()
    mentions = []
    for s, k in mention_words:
        start, end = word_spans[s][k % len(word_spans[s])]
        mentions.append(Mention(start, end, text[start:end], concept_id="D000001"))
    mentions.sort(key=lambda m: (m.start, m.end))
    return Document(doc_id, (Passage(0, text, "abstract"),), tuple(mentions))


def _check(packer: Packer, tokenizer, documents, names) -> None:
    inputs = packer.pack(documents, names)
    repeats = {(p.document, r): f for p in inputs for r, f in p.duplicates}
    if packer.level != "compact":
        assert not repeats
    for (d, repeat), first in repeats.items():  # only a token-for-token repeat of an earlier group
        assert first < repeat and names[d][repeat] == names[d][first]
        ids = [
            tokenizer(documents[d].mentions[i].text, add_special_tokens=False)["input_ids"]
            for i in (repeat, first)
        ]
        assert ids[0][: packer.max_mention_tokens] == ids[1][: packer.max_mention_tokens]
    expected = {
        (d, m, c)
        for d, doc in enumerate(names)
        for m, row in enumerate(doc)
        for c in range(len(row))
        if (d, m) not in repeats
    }
    seen = []
    for packed in inputs:
        assert len(packed) <= packer.max_length
        assert (
            packed.input_ids[0] == tokenizer.cls_token_id and packed.input_ids[-1] == tokenizer.sep_token_id
        )
        assert (
            packed.input_ids.count(tokenizer.mask_token_id) == len(packed.pairs) == len(packed.mask_positions)
        )
        assert all(packed.input_ids[p] == tokenizer.mask_token_id for p in packed.mask_positions)
        seen.extend((packed.document, m, c) for m, c in packed.pairs)
    assert len(seen) == len(set(seen)) and set(seen) == expected
    # every score comes back to its own pair
    shapes = [[len(row) for row in doc] for doc in names]
    scores = [
        [d * 10_000 + m * 100 + c for m, c in p.pairs] for p, d in zip(inputs, [p.document for p in inputs])
    ]
    table = scatter_scores(inputs, scores, shapes)
    for d, doc in enumerate(table):
        for m, row in enumerate(doc):
            source = repeats.get((d, m), m)
            assert row == [d * 10_000 + source * 100 + c for c in range(len(row))]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.data(),
    level=st.sampled_from(PACKING_LEVELS),
    window=st.integers(min_value=16, max_value=96),
)
def test_every_pair_scored_exactly_once(tokenizer, data, level, window):
    n_docs = data.draw(st.integers(1, 3))
    documents, names = [], []
    for d in range(n_docs):
        sentences = data.draw(
            st.lists(
                st.lists(st.integers(0, len(WORDS) - 1), min_size=1, max_size=40), min_size=1, max_size=4
            )
        )
        picks = data.draw(
            st.lists(
                st.tuples(st.integers(0, len(sentences) - 1), st.integers(0, 39)), max_size=6, unique=True
            )
        )
        document = _document(sentences, picks, f"doc{d}")
        documents.append(document)
        rows = []
        for _ in document.mentions:
            if rows and data.draw(st.booleans()):  # the same names as the previous mention: compact repeats
                rows.append(list(rows[-1]))
                continue
            count = data.draw(st.integers(0, 5))
            rows.append(
                [
                    " ".join(
                        WORDS[i] for i in data.draw(st.lists(st.integers(0, 12), min_size=1, max_size=12))
                    )
                    for _ in range(count)
                ]
            )
        names.append(rows)
    _check(Packer(tokenizer, level, max_length=window), tokenizer, documents, names)


def test_pair_template_matches_the_papers_string(tokenizer):
    """pair = tokenizer(f"{sentence}[SEP]{mention}[MASK]{name}") with the usual [CLS] ... [SEP]."""
    doc = document_from_title_abstract(
        "1", "Ataxia telangiectasia in patients.", "The ATM gene is mutated. Breast cancer risk rises."
    )
    start = doc.text.index("Breast cancer")
    doc = doc.with_mentions([Mention(start, start + 13, "Breast cancer", concept_id="D001943")])
    packed = Packer(tokenizer, "pair").pack([doc], [[["Breast Neoplasms", "Ovarian Neoplasms"]]])
    assert len(packed) == 2
    expected = tokenizer("Breast cancer risk rises.[SEP]Breast cancer[MASK]Ovarian Neoplasms")["input_ids"]
    assert list(packed[1].input_ids) == expected
    assert packed[1].pairs == ((0, 1),)


def test_levels_group_as_specified(tokenizer):
    doc = document_from_title_abstract(
        "2",
        "Fever and cough.",
        "Asthma patients had anemia. Ataxia was rare.",
    )
    text = doc.text
    mentions = [
        Mention(text.index(w), text.index(w) + len(w), w, concept_id="D1")
        for w in ("Fever", "cough", "Asthma", "anemia", "Ataxia")
    ]
    doc = doc.with_mentions(mentions)
    names = [[["a b", "c"], ["d"], ["e", "f", "g"], [], ["h"]]]
    counts = {level: len(Packer(tokenizer, level).pack([doc], names)) for level in PACKING_LEVELS}
    assert counts == {"pair": 7, "mention": 4, "sentence": 3, "document": 1, "compact": 1}
    compact = Packer(tokenizer, "compact").pack([doc], names)[0]
    document = Packer(tokenizer, "document").pack([doc], names)[0]
    assert len(compact) < len(document)
    decoded = tokenizer.decode(compact.input_ids)
    assert decoded.startswith(
        "[CLS] fever and cough. asthma patients had anemia. ataxia was rare. [SEP] fever [MASK] a b [MASK] c [SEP]"
    )
    # the mention without candidates is not packed, and the mapping says so
    assert all(m != 3 for m, _ in compact.pairs)


def test_overflowing_document_splits_and_repeats_sentence(tokenizer):
    sentence = "Breast cancer and ovarian cancer were seen in patients with ataxia telangiectasia"
    doc = document_from_title_abstract("3", "Title.", sentence + ".")
    text = doc.text
    mentions = [
        Mention(text.index(w), text.index(w) + len(w), w, concept_id="D1")
        for w in ("Breast cancer", "ovarian cancer", "ataxia telangiectasia")
    ]
    doc = doc.with_mentions(mentions)
    names = [[[f"candidate name number {i}" for i in range(12)] for _ in mentions]]
    sentence_ids = tokenizer(sentence + ".", add_special_tokens=False)["input_ids"]
    for level in ("mention", "sentence", "document", "compact"):
        packer = Packer(tokenizer, level, max_length=64)
        inputs = packer.pack([doc], names)
        assert len(inputs) > 3
        for packed in inputs:
            ids = list(packed.input_ids)
            assert ids[1 : 1 + len(sentence_ids)] == sentence_ids  # each input repeats its sentence text
        _check(packer, tokenizer, [doc], names)


def test_long_candidate_name_and_long_sentence_are_truncated(tokenizer):
    long_sentence = " ".join(["patients"] * 300) + " with fever " + " ".join(["cough"] * 300) + "."
    doc = document_from_title_abstract("4", "", long_sentence)
    start = doc.text.index("fever")
    doc = doc.with_mentions([Mention(start, start + 5, "fever", concept_id="D1")])
    names = [[["fever", " ".join(["syndrome"] * 600)]]]
    for level in PACKING_LEVELS:
        packer = Packer(tokenizer, level, max_length=128)
        inputs = packer.pack([doc], names)
        _check(packer, tokenizer, [doc], names)
        fever = tokenizer.convert_tokens_to_ids("fever")
        # the context window is centred on the mention, so the mention's sentence word is kept
        assert all(fever in p.input_ids[: p.mask_positions[0] - 1] for p in inputs)
        assert max(len(p) for p in inputs) <= 128


def test_bad_inputs(tokenizer):
    packer = Packer(tokenizer, "document")
    empty = Document("e", ())
    assert packer.pack([empty], [[]]) == []
    doc = document_from_title_abstract("5", "Fever.", "")
    doc = doc.with_mentions([Mention(0, 5, "Fever", concept_id="D1")])
    assert packer.pack([doc], [[[]]]) == []  # no candidates: nothing to score
    with pytest.raises(InputError, match="candidate lists"):
        packer.pack([doc], [[]])
    with pytest.raises(InputError, match="outside the text"):
        packer.pack([doc.with_mentions([Mention(0, 50, "Fever", concept_id="D1")])], [[["x"]]])
    with pytest.raises(ValueError, match="unknown packing level"):
        Packer(tokenizer, "passage")
    with pytest.raises(ValueError, match="below the minimum"):
        Packer(tokenizer, "pair", max_length=8)


def test_tokenizer_without_mask_is_refused(tokenizer):
    no_mask = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer.backend_tokenizer,
        unk_token="[UNK]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        pad_token="[PAD]",
    )
    assert no_mask.mask_token_id is None
    with pytest.raises(ModelError, match=r"no \[MASK\] token"):
        Packer(no_mask, "pair")


def test_compact_states_a_repeated_mention_group_once(tokenizer):
    doc = document_from_title_abstract(
        "4", "DMD in boys.", "Boys with DMD lose muscle. In DMD, dystrophin is absent. Asthma is not DMD."
    )
    text = doc.text
    starts = [i for i in range(len(text)) if text.startswith("DMD", i)]
    asthma = text.index("Asthma")
    doc = doc.with_mentions(
        [Mention(s, s + 3, "DMD", concept_id="D020388") for s in starts]
        + [Mention(asthma, asthma + 6, "Asthma", concept_id="D001249")]
    )
    same = ["Muscular Dystrophy, Duchenne", "Muscular Dystrophies"]
    names = [[same, same, same, ["Muscular Dystrophies", "Muscular Dystrophy, Duchenne"], ["Asthma"]]]
    doc_mentions = sorted(range(5), key=lambda i: doc.mentions[i].start)
    assert doc_mentions == list(range(5))  # mentions are kept in document order by with_mentions
    packed = Packer(tokenizer, "compact").pack([doc], names)
    assert len(packed) == 1
    only = packed[0]
    # the second and third "DMD" repeat the first token for token; the fourth lists its names in another order
    assert only.duplicates == ((1, 0), (2, 0))
    assert {m for m, _ in only.pairs} == {0, 3, 4}
    decoded = tokenizer.decode(only.input_ids)
    assert decoded.count("[MASK]") == 5 and decoded.count("asthma is not dmd.") == 1
    assert decoded.startswith("[CLS] dmd in boys. boys with dmd lose muscle. in dmd, dystrophin is absent.")
    table = scatter_scores(packed, [[0.9, 0.1, 0.2, 0.8, 0.7]], [[2, 2, 2, 2, 1]])
    assert table[0][:3] == [[0.9, 0.1]] * 3 and table[0][3] == [0.2, 0.8] and table[0][4] == [0.7]
    # the paper's levels keep every mention: each has its own sentence
    document_level = Packer(tokenizer, "document").pack([doc], names)
    assert sum(len(p.pairs) for p in document_level) == 9 and not document_level[0].duplicates
