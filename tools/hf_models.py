# Copyright 2026 The aitune-cpp Authors. SPDX-License-Identifier: Apache-2.0
"""Factories of Hugging Face models for tools/export_model.py --factory, as docs/libtorch.md runs
them: each builds the architecture from its default config with random weights (no download,
no weights needed; the library's default seed makes them the same each time).

  gpt2   transformers GPT2Model, the 124M configuration, use_cache=False (no past key values in
         the outputs: a plain export of the forward pass)
  bert   transformers BertModel, the BERT-base configuration

Usage: .venv/bin/python tools/export_model.py --factory tools/hf_models.py:gpt2 --out gpt2.pt2 \\
           --input 'input_ids=1x128:int64[0,50257)' --input 'attention_mask=1x128:int64[1,2)'
"""
import torch


def gpt2():
    import transformers
    torch.manual_seed(0)
    return transformers.GPT2Model(transformers.GPT2Config(use_cache=False)).eval()


def bert():
    import transformers
    torch.manual_seed(0)
    return transformers.BertModel(transformers.BertConfig()).eval()
