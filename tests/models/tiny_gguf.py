"""Tiny random-weight GGUF files for the model tests, written with the ``gguf`` package.

Two architectures, both with a byte-level BPE vocabulary (GPT-2 byte mapping), the Qwen special
tokens and the Qwen3.5 chat template (``qwen35_chat_template.jinja`` beside this file):

* ``write_dense_llama``: a 2-layer llama (a plain attention KV cache, which can be truncated);
* ``write_qwen35_hybrid``: a 4-layer qwen35 (3 Gated DeltaNet layers and one gated attention
  layer: a recurrent state that cannot be cut back to a shorter prefix).

The weights are random, so the models generate nonsense, but they load, tokenize, render the
template and run at thousands of tokens per second, which is what the backend tests need.
"""
from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np

TEMPLATE_PATH = Path(__file__).with_name("qwen35_chat_template.jinja")
CONTROL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
MARKUP_TOKENS = ("<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>")
MERGES = (("Ġ", "t"), ("t", "h"), ("th", "e"), ("i", "n"), ("Ġ", "a"), ("e", "r"))


def byte_alphabet() -> list[str]:
    """The 256 printable stand-ins GPT-2 style BPE uses for raw bytes, in byte order."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    mapping: dict[int, str] = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in mapping:
            mapping[b] = chr(256 + extra)
            extra += 1
    return [mapping[b] for b in range(256)]


def _write_vocabulary(writer: gguf.GGUFWriter, template: str) -> int:
    tokens = byte_alphabet() + ["".join(pair) for pair in MERGES]
    types = [gguf.TokenType.NORMAL] * len(tokens)
    for text in CONTROL_TOKENS:
        tokens.append(text)
        types.append(gguf.TokenType.CONTROL)
    for text in MARKUP_TOKENS:
        tokens.append(text)
        types.append(gguf.TokenType.USER_DEFINED)
    while len(tokens) % 32:
        tokens.append(f"<|unused{len(tokens)}|>")
        types.append(gguf.TokenType.UNUSED)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges([f"{a} {b}" for a, b in MERGES])
    writer.add_eos_token_id(tokens.index("<|im_end|>"))
    writer.add_pad_token_id(tokens.index("<|endoftext|>"))
    writer.add_bos_token_id(tokens.index("<|endoftext|>"))
    writer.add_add_bos_token(False)
    writer.add_chat_template(template)
    return len(tokens)


class _Weights:
    def __init__(self, writer: gguf.GGUFWriter, seed: int) -> None:
        self.writer = writer
        self.rng = np.random.default_rng(seed)

    def random(self, name: str, *shape: int, scale: float = 0.02) -> None:
        self.writer.add_tensor(name, (self.rng.standard_normal(shape) * scale).astype(np.float32))

    def ones(self, name: str, size: int) -> None:
        self.writer.add_tensor(name, np.ones(size, np.float32))


def _finish(writer: gguf.GGUFWriter) -> None:
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def write_dense_llama(path: Path, *, n_embd: int = 64, n_layer: int = 2, n_head: int = 4, n_head_kv: int = 2,
                      n_ff: int = 128, n_ctx_train: int = 65536, template: str | None = None) -> Path:
    """Write a tiny dense llama GGUF to ``path`` and return it."""
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("tiny-dense-llama")
    writer.add_context_length(n_ctx_train)
    writer.add_embedding_length(n_embd)
    writer.add_block_count(n_layer)
    writer.add_feed_forward_length(n_ff)
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_head_kv)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_rope_dimension_count(n_embd // n_head)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    n_vocab = _write_vocabulary(writer, template or TEMPLATE_PATH.read_text(encoding="utf-8"))
    w = _Weights(writer, seed=1)
    head_dim = n_embd // n_head
    w.random("token_embd.weight", n_vocab, n_embd)
    w.ones("output_norm.weight", n_embd)
    w.random("output.weight", n_vocab, n_embd)
    for i in range(n_layer):
        p = f"blk.{i}."
        w.ones(p + "attn_norm.weight", n_embd)
        w.random(p + "attn_q.weight", n_embd, n_embd)
        w.random(p + "attn_k.weight", head_dim * n_head_kv, n_embd)
        w.random(p + "attn_v.weight", head_dim * n_head_kv, n_embd)
        w.random(p + "attn_output.weight", n_embd, n_embd)
        w.ones(p + "ffn_norm.weight", n_embd)
        w.random(p + "ffn_gate.weight", n_ff, n_embd)
        w.random(p + "ffn_up.weight", n_ff, n_embd)
        w.random(p + "ffn_down.weight", n_embd, n_ff)
    _finish(writer)
    return path


def write_qwen35_hybrid(path: Path, *, n_embd: int = 64, n_layer: int = 4, n_head: int = 2, n_head_kv: int = 1,
                        head_dim: int = 32, n_ff: int = 128, n_ctx_train: int = 65536, d_state: int = 16,
                        n_group: int = 2, dt_rank: int = 4, d_conv: int = 4) -> Path:
    """Write a tiny qwen35 hybrid GGUF (every 4th layer is attention) to ``path`` and return it."""
    arch = "qwen35"
    writer = gguf.GGUFWriter(str(path), arch)
    writer.add_name("tiny-qwen35-hybrid")
    writer.add_context_length(n_ctx_train)
    writer.add_embedding_length(n_embd)
    writer.add_block_count(n_layer)
    writer.add_feed_forward_length(n_ff)
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_head_kv)
    writer.add_key_length(head_dim)
    writer.add_value_length(head_dim)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_rope_dimension_count(16)
    writer.add_rope_freq_base(10_000_000.0)
    writer.add_array(f"{arch}.rope.dimension_sections", [3, 3, 2, 0])
    d_inner = d_state * dt_rank
    writer.add_uint32(f"{arch}.ssm.conv_kernel", d_conv)
    writer.add_uint32(f"{arch}.ssm.inner_size", d_inner)
    writer.add_uint32(f"{arch}.ssm.state_size", d_state)
    writer.add_uint32(f"{arch}.ssm.time_step_rank", dt_rank)
    writer.add_uint32(f"{arch}.ssm.group_count", n_group)
    writer.add_uint32(f"{arch}.full_attention_interval", 4)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    n_vocab = _write_vocabulary(writer, TEMPLATE_PATH.read_text(encoding="utf-8"))
    w = _Weights(writer, seed=2)
    key_dim, value_dim = d_state * n_group, d_state * dt_rank
    conv_dim = 2 * key_dim + value_dim
    w.random("token_embd.weight", n_vocab, n_embd)
    w.ones("output_norm.weight", n_embd)
    w.random("output.weight", n_vocab, n_embd)
    for i in range(n_layer):
        p = f"blk.{i}."
        w.ones(p + "attn_norm.weight", n_embd)
        w.ones(p + "post_attention_norm.weight", n_embd)
        if (i + 1) % 4:  # Gated DeltaNet (recurrent) layer
            w.random(p + "attn_qkv.weight", conv_dim, n_embd)
            w.random(p + "attn_gate.weight", value_dim, n_embd)
            w.random(p + "ssm_conv1d.weight", conv_dim, d_conv, scale=0.2)
            writer.add_tensor(p + "ssm_dt.bias", np.zeros(dt_rank, np.float32))
            writer.add_tensor(p + "ssm_a", -np.abs(w.rng.standard_normal(dt_rank)).astype(np.float32))
            w.random(p + "ssm_beta.weight", dt_rank, n_embd)
            w.random(p + "ssm_alpha.weight", dt_rank, n_embd)
            w.ones(p + "ssm_norm.weight", d_state)
            w.random(p + "ssm_out.weight", n_embd, value_dim)
        else:  # gated full-attention layer
            w.random(p + "attn_q.weight", head_dim * n_head * 2, n_embd)
            w.random(p + "attn_k.weight", head_dim * n_head_kv, n_embd)
            w.random(p + "attn_v.weight", head_dim * n_head_kv, n_embd)
            w.random(p + "attn_output.weight", n_embd, head_dim * n_head)
            w.ones(p + "attn_q_norm.weight", head_dim)
            w.ones(p + "attn_k_norm.weight", head_dim)
        w.random(p + "ffn_gate.weight", n_ff, n_embd)
        w.random(p + "ffn_up.weight", n_ff, n_embd)
        w.random(p + "ffn_down.weight", n_embd, n_ff)
    _finish(writer)
    return path


if __name__ == "__main__":
    import sys

    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    print(write_dense_llama(out / "tiny-llama.gguf"), write_qwen35_hybrid(out / "tiny-qwen35.gguf"))
