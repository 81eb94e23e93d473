import pytest
import torch

import tx

# One intra-op thread: the tests' tensors are tiny, and on a busy 2-core CI machine PyTorch's OpenMP
# threads wait on each other (measured: a tiny beam search took 12 s with 2 threads, 0.3 s with 1).
torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def tiny_seq2seq(pre_norm: bool = False, share: bool = True, **kw) -> tx.Seq2SeqTransformer:
    cfg = dict(vocab_size=40, d_model=32, n_heads=4, n_layers=2, d_ff=64, dropout=0.0, max_len=64,
               pre_norm=pre_norm, share_embeddings=share)
    cfg.update(kw)
    return tx.Seq2SeqTransformer(tx.Seq2SeqConfig(**cfg)).eval()


def tiny_classifier(pre_norm: bool = False, pooling: str = "mean", **kw) -> tx.SentimentClassifier:
    cfg = dict(vocab_size=40, d_model=16, n_heads=2, n_layers=2, d_ff=32, dropout=0.0, max_len=64,
               pre_norm=pre_norm, pooling=pooling)
    cfg.update(kw)
    return tx.SentimentClassifier(tx.ClassifierConfig(**cfg)).eval()
