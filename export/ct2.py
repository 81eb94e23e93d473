"""python -m export ct2 MODEL_DIR [--out DIR] [--quantization int8|float32] [--check N | --test-sentences N]
                        [--steering] [--beam]

Converts a `tx` translator to CTranslate2, the engine people pick for fast CPU translation, so that
every speed claim of `export` can be measured against it on the same weights (`python -m bench runtimes`
adds its rows when `ctranslate2` is installed: `pip install ctranslate2`, optional).

What must match for identical output (measured): the position table is written out
(tx interleaves sin on even and cos on odd dimensions, CTranslate2's built-in table does not);
embeddings are scaled by √d_model; Q/K/V become one fused matrix (cross-attention: K/V fused);
LayerNorm ε 1e-5; the source is the `<2xx>` tag, the BPE pieces and `</s>`; decoding starts from `<s>`.
`--steering` also compares the steering options (target_prefix, return_alternatives with num_hypotheses 5,
greedy) on the same sentences, prefix = the first half of each reference translation; `--beam` compares beam
search's n best and alternatives (export/ct2_beam.py says which settings score alike).
After converting, `--check N` translates the first N sample sentences (samples.tsv; `--test-sentences N`: N
held-out ones, the export's sample of data/processed/translate/test.tsv) greedily in every direction with both
and counts identical outputs (token for token); the command fails when any differs in fp32 (int8 differs more
often: CTranslate2 quantises differently from onnxruntime; the shipped translator's figures are in
docs/export-and-runtime.md#ctranslate2).
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from runtime.model_files import read_tokenizer
from tx.checkpoint import load_model_dir
from tx.inference import Translator
from tx.layers import Residual
from tx.model import Seq2SeqTransformer

DEFAULT_OUT = Path("runs/ct2")  # runs/ct2/<model dir name>-<quantization>/: generated, never beside the shipped files


def _array(t: torch.Tensor) -> np.ndarray:
    return t.detach().float().cpu().numpy()


def _linear(spec, layer: torch.nn.Linear | list[torch.nn.Linear]) -> None:
    """One CTranslate2 linear from one torch Linear, or from several fused along the output dimension."""
    layers = layer if isinstance(layer, list) else [layer]
    spec.weight = _array(torch.cat([x.weight for x in layers]))  # (out, in), as torch stores it
    spec.bias = _array(torch.cat([x.bias for x in layers]))


def _norm(spec, residual: Residual) -> None:
    spec.gamma, spec.beta = _array(residual.norm.weight), _array(residual.norm.bias)


def translator_spec(model: Seq2SeqTransformer, vocabulary: list[str]):
    """The CTranslate2 TransformerSpec holding `model`'s weights."""
    from ctranslate2.specs import common_spec, transformer_spec

    c = model.config
    spec = transformer_spec.TransformerSpec.from_config((c.n_layers, c.n_decoder_layers), c.n_heads,
                                                        pre_norm=c.pre_norm, activation=common_spec.Activation.RELU)
    positions = _array(model.positional.pe)  # (max_len, D): tx's own table, written out
    encoder, decoder = spec.encoder, spec.decoder
    encoder.embeddings[0].weight = _array(model.src_embed.table.weight)
    decoder.embeddings.weight = _array(model.tgt_embed.table.weight)
    encoder.scale_embeddings = decoder.scale_embeddings = True  # × √d_model, as tx.Embeddings
    encoder.position_encodings.encodings = decoder.position_encodings.encodings = positions
    decoder.projection.weight = _array(model.generator.weight)
    for ours, theirs in zip(model.encoder.layers, encoder.layer, strict=True):
        a = ours.self_attn
        _linear(theirs.self_attention.linear[0], [a.w_q, a.w_k, a.w_v])
        _linear(theirs.self_attention.linear[1], a.w_o)
        _norm(theirs.self_attention.layer_norm, ours.res_attn)
        _linear(theirs.ffn.linear_0, ours.feed_forward.net[0])
        _linear(theirs.ffn.linear_1, ours.feed_forward.net[3])
        _norm(theirs.ffn.layer_norm, ours.res_ff)
    for ours, theirs in zip(model.decoder.layers, decoder.layer, strict=True):
        s, x = ours.self_attn, ours.cross_attn
        _linear(theirs.self_attention.linear[0], [s.w_q, s.w_k, s.w_v])
        _linear(theirs.self_attention.linear[1], s.w_o)
        _norm(theirs.self_attention.layer_norm, ours.res_self)
        _linear(theirs.attention.linear[0], x.w_q)
        _linear(theirs.attention.linear[1], [x.w_k, x.w_v])
        _linear(theirs.attention.linear[2], x.w_o)
        _norm(theirs.attention.layer_norm, ours.res_cross)
        _linear(theirs.ffn.linear_0, ours.feed_forward.net[0])
        _linear(theirs.ffn.linear_1, ours.feed_forward.net[3])
        _norm(theirs.ffn.layer_norm, ours.res_ff)
    if c.pre_norm:  # pre-LN stacks end with a LayerNorm
        encoder.layer_norm.gamma, encoder.layer_norm.beta = _array(model.encoder.norm.weight), \
            _array(model.encoder.norm.bias)
        decoder.layer_norm.gamma, decoder.layer_norm.beta = _array(model.decoder.norm.weight), \
            _array(model.decoder.norm.bias)
    spec.config.layer_norm_epsilon = 1e-5
    spec.config.add_source_bos = spec.config.add_source_eos = False  # the source tokens carry tag and </s>
    spec.register_source_vocabulary(vocabulary)
    spec.register_target_vocabulary(vocabulary)
    return spec


def convert(model_dir: str | Path, out: str | Path, quantization: str = "float32") -> Path:
    """Write the CTranslate2 model of a tx translator directory to `out`; returns `out`."""
    model = load_model_dir(model_dir, "seq2seq")
    tokenizer = read_tokenizer(model_dir)
    vocabulary = [tokenizer.id_to_token(i) for i in range(model.config.tgt_vocab_size)]
    spec = translator_spec(model, vocabulary)
    spec.validate()
    spec.optimize(quantization=None if quantization == "float32" else quantization)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    spec.save(str(out))
    return out


class Ct2Translator:
    """Greedy and beam translation of plain text with a converted model, tokenised exactly like tx's own."""

    def __init__(self, model_dir: str | Path, ct2_dir: str | Path, threads: int = 1):
        import ctranslate2

        self.text = Translator.from_dir(model_dir)  # its tokenizer, tags and limits (no decoding done with it)
        self.engine = ctranslate2.Translator(str(ct2_dir), device="cpu", inter_threads=1, intra_threads=threads)

    def token_ids(self, texts: list[str], src: str = "de", tgt: str = "en", beam: int = 1,
                  length_penalty: float = 0.0, max_len: int = 128, patience: float = 1.0) -> list[list[int]]:
        tok = self.text.tokenizer
        sources = [tok.tokens(self.text.source_ids(t, tgt)[0]) for t in texts]
        limit = min(max_len, self.text.backend.max_target_len)  # the position table's length, as tx's searches
        results = self.engine.translate_batch(sources, beam_size=beam, length_penalty=length_penalty,
                                              max_decoding_length=limit, return_end_token=True, patience=patience)
        return [[tok.token_to_id(t) for t in r.hypotheses[0]] for r in results]


class Ct2TextTranslator(Ct2Translator):
    """`translate()` with the signature bench runtimes calls, returning objects with `token_ids`."""

    def translate(self, texts: list[str], src_lang: str = "de", tgt_lang: str = "en", method: str = "greedy",
                  beam: int = 4, max_len: int | None = None, length_penalty: float = 0.6,
                  patience: float | None = 1.0, **_) -> list:
        """patience None (tx's exact stopping) has no CTranslate2 equivalent: it runs its default, 1."""
        from types import SimpleNamespace

        width = beam if method == "beam" else 1
        ids = self.token_ids(texts, src_lang, tgt_lang, beam=width, max_len=max_len or 256,
                             length_penalty=length_penalty if width > 1 else 0.0,
                             patience=1.0 if patience is None else patience)
        return [SimpleNamespace(token_ids=row) for row in ids]


@dataclass
class SteeringAgreement:
    """CTranslate2 against tx on the steering options, over the same sentences and prefixes (greedy, fp32)."""

    sentences: int
    same_prefixed: int  # greedy with target_prefix: identical tokens (prefix, continuation and </s>)
    same_alternative_sets: int  # return_alternatives: the same set of tokens right after the prefix
    same_alternative_order: int  # ... in the same order (most probable first)
    same_completions: int  # ... and every alternative completed to the same tokens
    differences: list[str]  # one line per sentence that differs anywhere, saying where


def reference_prefix(reference: str) -> str:
    """The first half of a reference translation's words (at least one): the start a user might type."""
    words = reference.split()
    return " ".join(words[:max(1, len(words) // 2)])


def steering_check(model_dir: Path, ct2_dir: Path, rows: list[dict[str, str]], src: str, tgt: str,
                   alternatives: int = 5, max_len: int = 128) -> SteeringAgreement:
    """tx's target_prefix and return_alternatives (greedy) against CTranslate2's, prefix = the first half of each
    row's reference translation (`reference_prefix`), tokenised alike."""
    ours = Translator.from_dir(model_dir)
    peer = Ct2Translator(model_dir, ct2_dir)
    tok = ours.tokenizer
    texts, prefixes = [r[src] for r in rows], [reference_prefix(r[tgt]) for r in rows]
    sources = [tok.tokens(ours.source_ids(t, tgt)[0]) for t in texts]
    prefix_tokens = [tok.tokens(ours.prefix_ids(p)) for p in prefixes]
    limit = min(max_len, ours.backend.max_target_len)
    kw = dict(beam_size=1, max_decoding_length=limit, return_end_token=True)
    prefixed = ours.translate(texts, src, tgt, method="greedy", max_len=limit, target_prefix=prefixes)
    theirs = peer.engine.translate_batch(sources, target_prefix=prefix_tokens, **kw)
    alts = ours.translate_n_best(texts, src, tgt, method="greedy", max_len=limit, target_prefix=prefixes,
                                 return_alternatives=True, num_hypotheses=alternatives)
    their_alts = peer.engine.translate_batch(sources, target_prefix=prefix_tokens, return_alternatives=True,
                                             num_hypotheses=alternatives, **kw)
    counts = [0, 0, 0, 0]
    differences = []
    for i, (mine, their, my_alts, their_alt) in enumerate(zip(prefixed, theirs, alts, their_alts, strict=True)):
        n = len(prefix_tokens[i])
        their_rows = [[tok.token_to_id(t) for t in h] for h in their_alt.hypotheses]
        same = [mine.token_ids == [tok.token_to_id(t) for t in their.hypotheses[0]],
                {a.token_ids[n] for a in my_alts} == {h[n] for h in their_rows},
                [a.token_ids[n] for a in my_alts] == [h[n] for h in their_rows],
                [a.token_ids for a in my_alts] == their_rows]
        counts = [c + ok for c, ok in zip(counts, same, strict=True)]
        if not all(same):
            what = ", ".join(name for name, ok in zip(("prefixed greedy", "alternative set", "alternative order",
                                                      "completions"), same, strict=True) if not ok)
            differences.append(f"{src}->{tgt} #{i} {texts[i]!r} (prefix {prefixes[i]!r}): {what} differ")
    return SteeringAgreement(len(rows), *counts, differences)


def check(model_dir: Path, ct2_dir: Path, texts: list[str], src: str, tgt: str) -> tuple[int, int]:
    """(identical greedy outputs, total) of CTranslate2 against tx's PyTorch model on `texts`."""
    want = [t.token_ids for t in Translator.from_dir(model_dir).translate(texts, src, tgt, method="greedy",
                                                                          max_len=128)]
    got = Ct2Translator(model_dir, ct2_dir).token_ids(texts, src, tgt)
    return sum(a == b for a, b in zip(got, want, strict=True)), len(texts)


def comparison_rows(model_dir: Path, data_dir: Path, languages: set[str], samples: int, test_sentences: int):
    """The sentences to compare on (quality.Texts; no rows when there are none): `test_sentences` held-out ones
    (the export's own sample of test.tsv) when asked, else the first `samples` rows of the model's samples.tsv."""
    from .quality import Texts, held_out_texts

    if test_sentences:
        return held_out_texts(data_dir / "translate", model_dir, languages, test_sentences)
    if not samples:
        return Texts("nothing (--check 0)")
    from runtime.tsv import read_tsv

    path = model_dir / "samples.tsv"
    return Texts(f"the first {samples} rows of {path}", read_tsv(path)[:samples] if path.is_file() else [])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m export ct2", description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("--out", type=Path, help=f"default {DEFAULT_OUT}/<MODEL_DIR name>-<quantization>")
    parser.add_argument("--quantization", choices=["float32", "int8"], default="float32")
    parser.add_argument("--check", type=int, default=100,
                        help="sample sentences (MODEL_DIR/samples.tsv) compared with PyTorch (0 = none)")
    parser.add_argument("--test-sentences", type=int, default=0,
                        help="compare on this many held-out sentences (DATA_DIR/translate/test.tsv) instead")
    parser.add_argument("--data-dir", type=Path, default=Path("data/processed"))
    parser.add_argument("--steering", action="store_true",
                        help="also compare target_prefix and return_alternatives (greedy) on the same sentences")
    parser.add_argument("--beam", action="store_true",
                        help="also compare beam 4's n best (1-4) and alternatives, with and without the prefix")
    args = parser.parse_args(argv)
    try:
        import ctranslate2  # noqa: F401
    except ImportError:
        print("error: ctranslate2 is not installed (`pip install ctranslate2`; it is an optional peer)",
              file=sys.stderr)
        return 2
    out = convert(args.model_dir, args.out or DEFAULT_OUT / f"{args.model_dir.resolve().name}-{args.quantization}",
                  args.quantization)
    print(f"wrote {out}")
    directions = [tuple(d) for d in Translator.from_dir(args.model_dir).directions]
    rows = comparison_rows(args.model_dir, args.data_dir, {lang for d in directions for lang in d}, args.check,
                           args.test_sentences)
    print(f"comparing greedy output with PyTorch on {rows.origin}")
    if rows.rows:
        for src, tgt in directions:
            same, total = check(args.model_dir, out, [r[src] for r in rows.rows], src, tgt)
            print(f"{src}->{tgt}: greedy output identical to PyTorch for {same} of {total} sentences")
            if args.quantization == "float32" and same != total:
                print("error: fp32 CTranslate2 must equal PyTorch token for token", file=sys.stderr)
                return 1
            if args.steering:
                a = steering_check(args.model_dir, out, rows.rows, src, tgt)
                print(f"{src}->{tgt} steering, prefix = first half of the reference: greedy with the prefix identical "
                      f"for {a.same_prefixed} of {a.sentences}; 5 alternatives the same set for "
                      f"{a.same_alternative_sets}, same order for {a.same_alternative_order}, every completion "
                      f"identical for {a.same_completions}")
                for line in a.differences:
                    print(f"  {line}")
            if args.beam:
                from .ct2_beam import beam_check, report

                b = beam_check(args.model_dir, out, rows.rows, src, tgt, [reference_prefix(r[tgt]) for r in rows.rows])
                print(report(b, src, tgt))
                for line in b.differences:
                    print(f"  {line}")
    return 0
