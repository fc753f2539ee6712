"""The span model's pieces that need no training: span enumeration (eq. 4), word-piece offsets on real
NCBI-disease text, windows and their merging, and the neleval metrics on hand-made cases."""

from __future__ import annotations

import pytest
import torch

from core.detect.span_scores import span_logits, span_mask, span_means
from core.detect.wordpieces import Pieces, backend, resolve_overlaps, windows, word_pieces
from core.evaluate.entity_linking import Annotation, overlap_maxmax, strong_match


@pytest.fixture(scope="module")
def rust():
    from core.locations import packaged_model_folder
    from core.safe_models import load_bert_tokenizer

    return backend(load_bert_tokenizer(packaged_model_folder()))


# --- span enumeration -------------------------------------------------------------------------------


def _brute_force_spans(text: list[bool], first: list[bool], max_span: int) -> set[tuple[int, int]]:
    """Every (i, j) the rules admit, by enumerating pairs one by one."""
    found = set()
    n = len(text)
    for i in range(n):
        for j in range(i, min(n, i + max_span)):
            if not all(text[i : j + 1]) or not first[i]:
                continue
            if j + 1 < n and text[j + 1] and not first[j + 1]:
                continue  # would cut a word
            found.add((i, j))
    return found


def test_span_mask_admits_exactly_the_whole_word_spans_of_text_pieces() -> None:
    # [CLS] w1 ##a w2 w3 ##b ##c w4 [SEP] pad pad
    text = [False, True, True, True, True, True, True, True, False, False, False]
    first = [False, True, False, True, True, False, False, True, False, False, False]
    for max_span in (1, 3, 10):
        mask = span_mask(torch.tensor([text]), torch.tensor([first]), max_span)[0]
        got = {(i, i + length) for i, length in torch.nonzero(mask).tolist()}
        assert got == _brute_force_spans(text, first, max_span)
    # by hand for L = 10: words are [1-2], [3], [4-6], [7]; spans are runs of whole words
    assert len(got) == 10  # 4 single words + 3 pairs + 2 triples + 1 of all four
    assert (0, 0) not in got and (8, 8) not in got, "[CLS] and [SEP] are never spans"
    assert (1, 1) not in got and (5, 6) not in got, "no span cuts a word"


def test_span_mask_counts_on_a_padded_batch() -> None:
    lengths = [12, 7]
    text = torch.zeros((2, 12), dtype=torch.bool)
    for row, n in enumerate(lengths):
        text[row, 1 : n - 1] = True  # [CLS] ... [SEP]
    first = text.clone()  # every piece a word
    mask = span_mask(text, first, 4)
    for row, n in enumerate(lengths):
        words = n - 2
        expected = sum(min(4, words - i) for i in range(words))
        assert int(mask[row].sum()) == expected


def test_span_logits_are_start_plus_end_plus_inside_sum() -> None:
    torch.manual_seed(0)
    scores = torch.randn(2, 9, 3)
    logits = span_logits(scores, 4)
    for b in range(2):
        for i in range(9):
            for length in range(4):
                j = i + length
                if j >= 9:
                    assert logits[b, i, length] == 0
                    continue
                expected = scores[b, i, 0] + scores[b, j, 1] + scores[b, i : j + 1, 2].sum()
                assert torch.isclose(logits[b, i, length], expected, atol=1e-5)


def test_span_means_are_the_mean_of_the_span_states() -> None:
    hidden = torch.arange(2 * 6 * 3, dtype=torch.float32).reshape(2, 6, 3)
    rows, starts, ends = torch.tensor([0, 1, 1]), torch.tensor([1, 0, 5]), torch.tensor([3, 0, 5])
    means = span_means(hidden, starts, ends, rows)
    for k in range(3):
        expected = hidden[rows[k], starts[k] : ends[k] + 1].mean(0)
        assert torch.allclose(means[k], expected)


# --- offsets on characters ----------------------------------------------------------------------------


def _round_trip(rust, documents) -> int:
    """Every aligned gold mention's pieces map back to its exact characters; returns how many."""
    checked = 0
    for document in documents:
        text = document.text
        pieces = word_pieces(rust, text)
        assert all(0 <= s < e <= len(text) for s, e in zip(pieces.starts, pieces.ends, strict=True))
        assert list(pieces.starts) == sorted(pieces.starts)
        for mention in document.mentions:
            span = pieces.piece_span(mention.start, mention.end)
            if span is None:
                assert not text[mention.start : mention.end].strip()
                continue
            if pieces.aligned(mention.start, mention.end):
                start, end = pieces.starts[span[0]], pieces.ends[span[1]]
                assert (start, end) == (mention.start, mention.end)
                assert text[start:end] == mention.text
                checked += 1
    return checked


def test_offsets_round_trip_on_ncbi_sentences_with_non_ascii_characters(rust, ncbi_dir) -> None:
    """NCBI-disease itself is pure ASCII: its abstracts are given non-ASCII characters of the same length
    in characters (not in bytes): Unicode hyphens and apostrophes, a combining diaeresis before each
    mention's text is untouched, and an accented prefix that shifts every offset by characters."""
    from dataclasses import replace

    from core.formats import read_corpus

    prefix = "Résumé — naïve Mo\u0308bius: "
    documents = []
    for document in list(read_corpus(ncbi_dir / "NCBItrainset_corpus.txt", "pubtator"))[:60]:
        text = prefix + document.text.replace("-", "\u2010").replace("'", "\u2019")
        shifted = [
            replace(
                m,
                start=m.start + len(prefix),
                end=m.end + len(prefix),
                text=text[m.start + len(prefix) : m.end + len(prefix)],
            )
            for m in document.mentions
        ]
        documents.append((text, shifted))
    assert len(prefix.encode()) > len(prefix), "byte offsets would differ from character offsets"
    checked = 0
    for text, mentions in documents:
        pieces = word_pieces(rust, text)
        for mention in mentions:
            if pieces.aligned(mention.start, mention.end):
                first, last = pieces.piece_span(mention.start, mention.end)
                assert text[pieces.starts[first] : pieces.ends[last]] == mention.text
                checked += 1
    assert checked > 400
    moebius = prefix.index("Mo\u0308bius")
    pieces = word_pieces(rust, prefix)
    assert pieces.aligned(moebius, moebius + len("Mo\u0308bius")), "a combining mark stays inside its word"


def test_offsets_round_trip_on_real_non_ascii_abstracts(rust, shared_data) -> None:
    """NLM-Chem test abstracts (real text: thin spaces, Greek letters, minus signs, micro signs)."""
    from core.formats import read_corpus

    path = shared_data / "realworld" / "pubtator" / "aioner_NLMchem_Test.PubTator"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    documents = [d for d in read_corpus(path, "pubtator") if not d.text.isascii()][:10]
    assert documents
    assert _round_trip(rust, documents) > 200


def test_empty_text_has_no_pieces_and_no_windows(rust) -> None:
    assert len(word_pieces(rust, "")) == 0
    assert windows(word_pieces(rust, ""), 254) == []
    assert windows(word_pieces(rust, "   \n "), 254) == []


# --- windows and merging ----------------------------------------------------------------------------


def test_every_short_mention_of_a_long_document_lies_whole_in_a_window(rust, ncbi_dir) -> None:
    from core.formats import read_corpus

    documents = list(read_corpus(ncbi_dir / "NCBItrainset_corpus.txt", "pubtator"))[:40]
    text = " ".join(d.text for d in documents)  # one document far longer than any window
    offset, mentions = 0, []
    for d in documents:
        mentions += [(m.start + offset, m.end + offset) for m in d.mentions]
        offset += len(d.text) + 1
    pieces = word_pieces(rust, text)
    spans = windows(pieces, 62)
    assert len(spans) > 50
    assert spans[0][0] == 0 and spans[-1][1] == len(pieces)
    for (_, b), (c, _) in zip(spans, spans[1:]):
        assert c < b and b - c >= 20, "consecutive windows overlap by at least 2 L pieces"
        assert pieces.word_starts[c], "a window starts on a word"
    crossing = 0
    for start, end in mentions:
        first, last = pieces.piece_span(start, end)
        if last - first + 1 > 10:
            continue
        homes = [w for w in spans if w[0] <= first and last < w[1]]
        assert homes, f"mention {text[start:end]!r} is whole in no window"
        crossing += any(a <= first < b <= last for a, b in spans)
    assert crossing > 0, "the slice has mentions crossing a window border"


def test_merging_keeps_a_border_crossing_mention_once() -> None:
    from core.detect.span_detector import merge_window_spans

    # 12 one-character words "a b c ...": piece k covers characters 2k .. 2k + 1
    pieces = Pieces(
        tuple(range(12)), tuple(2 * k for k in range(12)), tuple(2 * k + 1 for k in range(12)), (True,) * 12
    )
    # window 1 = pieces 0..7, window 2 = pieces 4..11 (input position p is piece first + p - 1)
    reads = [
        (0, 6, 8, 0.7, "cut at the border of window 1"),  # pieces 5..7
        (4, 2, 6, 0.9, "whole in window 2"),  # pieces 5..9: crosses window 1's border
        (4, 2, 4, 0.6, "pieces 5..7 again, from window 2"),
        (0, 1, 1, 0.8, "piece 0"),
    ]
    merged = merge_window_spans(pieces, reads)
    assert merged[(10, 19)] == (0.9, "whole in window 2")
    assert merged[(10, 15)] == (0.7, "cut at the border of window 1"), "seen twice, kept once, best reading"
    assert len(merged) == 3
    rows = [(s, e, p) for (s, e), (p, _) in merged.items()]
    kept = [rows[i][:2] for i in resolve_overlaps(rows)]
    assert kept == [(0, 1), (10, 19)], "non-overlapping, in text order, the most probable first"


# --- neleval measures ----------------------------------------------------------------------------------


def test_strong_match_counts_exact_span_and_kb_id() -> None:
    gold = [Annotation("d1", 0, 5, "A"), Annotation("d1", 10, 20, "B"), Annotation("d2", 0, 4, "C")]
    predicted = [
        Annotation("d1", 0, 5, "A"),  # right
        Annotation("d1", 10, 20, "X"),  # right span, wrong concept
        Annotation("d2", 0, 3, "C"),  # wrong span
        Annotation("d2", 0, 3, "C"),  # duplicate: counted once
    ]
    linked = strong_match(gold, predicted)
    assert (linked["precision"], linked["recall"]) == (pytest.approx(1 / 3), pytest.approx(1 / 3))
    spans = strong_match(gold, predicted, with_kb_id=False)
    assert (spans["precision"], spans["recall"]) == (pytest.approx(2 / 3), pytest.approx(2 / 3))
    assert spans["f1"] == pytest.approx(2 / 3)


def test_overlap_maxmax_on_the_neleval_documentation_example() -> None:
    # neleval doc/approximate.rst: gold 1-10 and 12-12, system 1-5 and 6-12 (inclusive offsets)
    gold = [Annotation("d", 1, 11), Annotation("d", 12, 13)]
    predicted = [Annotation("d", 1, 6), Annotation("d", 6, 13)]
    result = overlap_maxmax(gold, predicted, with_kb_id=False)
    # system 1-5: 5 of 5 characters covered; system 6-12: best gold covers 5 of its 7
    assert result["precision"] == pytest.approx((1 + 5 / 7) / 2)
    # gold 1-10: best system covers 5 of 10; gold 12-12: 1 of 1
    assert result["recall"] == pytest.approx((0.5 + 1) / 2)


def test_overlap_maxmax_with_kb_ids_needs_the_same_concept() -> None:
    gold = [Annotation("d", 0, 10, "A"), Annotation("d", 20, 30, "B")]
    predicted = [Annotation("d", 0, 4, "A"), Annotation("d", 22, 30, "C"), Annotation("e", 0, 10, "A")]
    result = overlap_maxmax(gold, predicted)
    assert result["precision"] == pytest.approx((1.0 + 0 + 0) / 3)
    assert result["recall"] == pytest.approx((0.4 + 0) / 2)
