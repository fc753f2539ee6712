"""Every candidate span of a chunk and its score (paper eq. 4, methods.md §C.6).

A `Linear(H, 3)` gives each word piece a start, an end and an inside score; the span (i, j) scores
s_start(i) + s_end(j) + sum_{q=i..j} s_inside(q), the sum read off a cumulative sum, so all spans of up
to L pieces cost one pass. Spans are laid out as a [batch, T, L] grid: cell (b, i, l) is the span from
piece i to piece i + l.

Which cells are real spans (`span_mask`): both ends on text pieces (not [CLS], [SEP] or padding; the
reference code leaves [CLS]/[SEP] in, which only adds spans no gold can match), inside the chunk, and
on word boundaries: a span may not start on a "##" continuation piece nor end just before one, so it
never cuts a word ("HT" inside "5-HT(2B)" is a word of its own to BERT's pre-tokenizer and stays
findable; "thalass" inside "thalassemia" does not).
"""

from __future__ import annotations

import torch

MAX_SPAN_PIECES = 10
"""L of the paper (§4.3); the reference code's default is 20."""


def span_ends(length: int, max_span: int = MAX_SPAN_PIECES, device=None) -> tuple[torch.Tensor, torch.Tensor]:
    """(starts [T, L], ends [T, L]) piece indices of the grid; ends may run past the chunk (masked)."""
    starts = torch.arange(length, device=device).unsqueeze(1).expand(length, max_span)
    ends = starts + torch.arange(max_span, device=device).unsqueeze(0)
    return starts, ends


def span_mask(
    text_pieces: torch.Tensor, word_starts: torch.Tensor, max_span: int = MAX_SPAN_PIECES
) -> torch.Tensor:
    """[B, T, L] bool: which grid cells are candidate spans.

    `text_pieces` [B, T] is True on word pieces of the text (False on [CLS], [SEP], padding);
    `word_starts` [B, T] is True on the first piece of each word.
    """
    batch, length = text_pieces.shape
    starts, ends = span_ends(length, max_span, text_pieces.device)
    inside = ends < length
    safe_ends = ends.clamp(max=length - 1)
    after = (ends + 1).clamp(max=length - 1)
    text = text_pieces.bool()
    first = word_starts.bool()
    ok_start = (text & first)[:, starts]
    ok_end = text[:, safe_ends]
    # the piece after the end starts a new word, or is not text ([SEP], padding), or the chunk ends
    next_is_new = (first | ~text)[:, after] | (ends + 1 >= length).unsqueeze(0)
    # every piece of the span is text (a span never runs over [SEP] into padding)
    text_count = torch.nn.functional.pad(text.long().cumsum(1), (1, 0))
    pieces_in = text_count[:, safe_ends + 1] - text_count[:, starts]
    whole = pieces_in == (ends - starts + 1).unsqueeze(0)
    return inside.unsqueeze(0) & ok_start & ok_end & next_is_new & whole


def span_logits(token_scores: torch.Tensor, max_span: int = MAX_SPAN_PIECES) -> torch.Tensor:
    """[B, T, L] span scores from [B, T, 3] (start, end, inside) piece scores (cells past the chunk: 0)."""
    batch, length, _ = token_scores.shape
    starts, ends = span_ends(length, max_span, token_scores.device)
    safe_ends = ends.clamp(max=length - 1)
    inside = torch.nn.functional.pad(token_scores[..., 2].cumsum(1), (1, 0))  # [B, T + 1]
    sums = inside[:, safe_ends + 1] - inside[:, starts]
    scores = token_scores[..., 0][:, starts] + token_scores[..., 1][:, safe_ends] + sums
    return scores.masked_fill(~(ends < length).unsqueeze(0), 0.0)


def span_means(
    hidden: torch.Tensor, starts: torch.Tensor, ends: torch.Tensor, rows: torch.Tensor
) -> torch.Tensor:
    """[N, H] mean of the hidden states of pieces starts..ends (inclusive) in chunk `rows` (paper §3.4)."""
    cumulative = torch.nn.functional.pad(hidden.cumsum(1), (0, 0, 1, 0))  # [B, T + 1, H]
    total = cumulative[rows, ends + 1] - cumulative[rows, starts]
    return total / (ends - starts + 1).unsqueeze(1).to(hidden.dtype)
