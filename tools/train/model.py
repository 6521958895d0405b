"""A trainable MiniMind (dense, qk-norm) as a torch nn.Module whose state-dict names are MiniMind's (spec §3).

tools/reference/minimind_reference.py is the oracle but not trainable (plain tensors, no_grad); this module computes
the same forward pass (spec §2) with parameters, and adds what training needs: a block-diagonal causal mask so that
several documents packed in one row do not attend to each other. check_model.py compares its logits with the
reference's on the same weights.

    model = MiniMindForTraining(TrainConfig())          # minigen tiny: 256 hidden, 4 layers, 8/2 heads, ffn 832
    logits = model(ids, document_ids)                     # ids, document_ids: [batch, tokens]
    tensors = model.export_tensors()                      # name → float32 tensor, lm_head and embed both present
"""
import dataclasses
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclasses.dataclass
class TrainConfig:
    """minigen's tiny family (spec §1). Field names follow src/model/config.h."""
    vocab_size: int = 6400
    hidden_size: int = 256
    num_layers: int = 4
    num_q_heads: int = 8
    num_kv_heads: int = 2
    head_dim: int = 32
    intermediate_size: int = 832  # 64 · ceil(256 · π / 64)
    rms_norm_eps: float = 1e-6
    rope_theta: float = 1e6
    max_position_embeddings: int = 32768
    bos_token_id: int = 1
    eos_token_id: int = 2

    def config_json(self):
        """config.json as `minigen init-random --family tiny` writes it (MiniMind's field names plus what HF needs to
        load it as Qwen3ForCausalLM)."""
        return {
            "architectures": ["Qwen3ForCausalLM"],
            "attention_bias": False,
            "bos_token_id": self.bos_token_id,
            "eos_token_id": self.eos_token_id,
            "head_dim": self.head_dim,
            "hidden_act": "silu",
            "hidden_size": self.hidden_size,
            "inference_rope_scaling": False,
            "intermediate_size": self.intermediate_size,
            "max_position_embeddings": self.max_position_embeddings,
            "model_type": "qwen3",
            "num_attention_heads": self.num_q_heads,
            "num_hidden_layers": self.num_layers,
            "num_key_value_heads": self.num_kv_heads,
            "rms_norm_eps": self.rms_norm_eps,
            "rope_scaling": None,
            "rope_theta": self.rope_theta,
            "tie_word_embeddings": True,
            "torch_dtype": "float32",
            "use_moe": False,
            "vocab_size": self.vocab_size,
        }


class RMSNorm(nn.Module):
    """weight · x / sqrt(mean(x²) + eps) over the last dimension."""

    def __init__(self, width, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(width))

    def forward(self, x):
        x = x.float()  # in float32 even under bf16 autocast, as MiniMind's RMSNorm
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def rotate_half(x):
    """(x1, x2) → (−x2, x1) over the two halves of the last dimension (rotate-half RoPE, spec §2)."""
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


class Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        c = config
        self.q_proj = nn.Linear(c.hidden_size, c.num_q_heads * c.head_dim, bias=False)
        self.k_proj = nn.Linear(c.hidden_size, c.num_kv_heads * c.head_dim, bias=False)
        self.v_proj = nn.Linear(c.hidden_size, c.num_kv_heads * c.head_dim, bias=False)
        self.o_proj = nn.Linear(c.num_q_heads * c.head_dim, c.hidden_size, bias=False)
        self.q_norm = RMSNorm(c.head_dim, c.rms_norm_eps)
        self.k_norm = RMSNorm(c.head_dim, c.rms_norm_eps)

    def forward(self, x, cos, sin, mask):
        """x [batch, tokens, hidden]; cos, sin [tokens, hd]; mask [batch, 1, tokens, tokens], True = may attend."""
        c = self.config
        batch, tokens, _ = x.shape
        q = self.q_norm(self.q_proj(x).view(batch, tokens, c.num_q_heads, c.head_dim))  # qk-norm before RoPE
        k = self.k_norm(self.k_proj(x).view(batch, tokens, c.num_kv_heads, c.head_dim))
        v = self.v_proj(x).view(batch, tokens, c.num_kv_heads, c.head_dim)
        cos, sin = cos[None, :, None, :], sin[None, :, None, :]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        group = c.num_q_heads // c.num_kv_heads  # query head h reads kv head h // group
        q = (q * (1.0 / math.sqrt(c.head_dim))).transpose(1, 2)  # [batch, q_heads, tokens, hd], pre-scaled
        k = k.repeat_interleave(group, dim=2).transpose(1, 2)
        v = v.repeat_interleave(group, dim=2).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)).masked_fill(~mask, float("-inf"))
        # Under bf16 autocast the scores stay bfloat16 through the softmax: the [batch, heads, tokens, tokens]
        # conversions to float32 and back cost more than all the matmuls of the layer on this CPU. In float32
        # (evaluation, checks) the softmax is float32 as in spec §2.
        out = F.softmax(scores, dim=-1) @ v
        return self.o_proj(out.transpose(1, 2).reshape(batch, tokens, c.num_q_heads * c.head_dim))


class MLP(nn.Module):
    """down(silu(gate(x)) · up(x))."""

    def __init__(self, config):
        super().__init__()
        self.gate_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.up_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.down_proj = nn.Linear(config.intermediate_size, config.hidden_size, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.input_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.self_attn = Attention(config)
        self.post_attention_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.mlp = MLP(config)

    def forward(self, h, cos, sin, mask):
        h = h + self.self_attn(self.input_layernorm(h), cos, sin, mask)
        return h + self.mlp(self.post_attention_layernorm(h))


class Backbone(nn.Module):
    """Named `model` in the causal LM, so that parameter names read model.layers.{i}.… as in MiniMind."""

    def __init__(self, config):
        super().__init__()
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList(DecoderLayer(config) for _ in range(config.num_layers))
        self.norm = RMSNorm(config.hidden_size, config.rms_norm_eps)


class MiniMindForTraining(nn.Module):
    def __init__(self, config, max_tokens=1024):
        super().__init__()
        self.config = config
        self.model = Backbone(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        # Tied as MiniMind ties them: the embedding is the lm_head's matrix (so it starts with nn.Linear's init,
        # U(±1/sqrt(hidden)), as MiniMind's does); the state dict holds it under both names.
        self.model.embed_tokens.weight = self.lm_head.weight
        freqs = 1.0 / (config.rope_theta ** (torch.arange(0, config.head_dim, 2).float() / config.head_dim))
        angles = torch.outer(torch.arange(max_tokens).float(), freqs)
        self.register_buffer("rope_cos", torch.cat([angles.cos(), angles.cos()], dim=-1), persistent=False)
        self.register_buffer("rope_sin", torch.cat([angles.sin(), angles.sin()], dim=-1), persistent=False)

    def forward(self, ids, document_ids=None, select=None):
        """ids [batch, tokens] → logits [batch, tokens, vocab]. document_ids [batch, tokens] (optional): a query sees
        only earlier keys of its own document. Positions run 0 … tokens−1 along the row; RoPE makes attention depend
        only on the distance between positions, so a document packed at an offset gets the same scores as alone.
        select [batch, tokens] bool (optional): logits only at those positions, [selected, vocab] (training computes
        the output layer only where there is a target)."""
        tokens = ids.shape[1]
        causal = torch.ones(tokens, tokens, dtype=torch.bool, device=ids.device).tril()
        if document_ids is None:
            mask = causal[None, None]
        else:
            same_document = document_ids[:, :, None] == document_ids[:, None, :]
            mask = (same_document & causal)[:, None]
        cos, sin = self.rope_cos[:tokens], self.rope_sin[:tokens]
        h = self.model.embed_tokens(ids)
        for layer in self.model.layers:
            h = layer(h, cos, sin, mask)
        h = self.model.norm(h)
        return self.lm_head(h if select is None else h[select])

    def export_tensors(self):
        """name → float32 tensor with MiniMind's names; `lm_head.weight` and `model.embed_tokens.weight` both present
        (equal), as in MiniMind's state dicts."""
        return {name: tensor.detach().float().clone() for name, tensor in self.state_dict().items()}

    def load_tensors(self, tensors):
        """Loads name → tensor (numpy or torch), MiniMind's names; lm_head may be absent (tied)."""
        state = {name: torch.as_tensor(value).float() for name, value in tensors.items()}
        state.setdefault("lm_head.weight", state["model.embed_tokens.weight"])
        if not torch.equal(state["lm_head.weight"], state["model.embed_tokens.weight"]):
            raise ValueError("lm_head.weight differs from model.embed_tokens.weight: not a tied model")
        missing, unexpected = self.load_state_dict(state, strict=False)
        if missing or unexpected:
            raise ValueError(f"weights do not fit the model: missing {missing}, unexpected {unexpected}")


def new_model(config, seed):
    """A freshly initialised model (PyTorch's default initialisation, as MiniMind's)."""
    torch.manual_seed(seed)
    return MiniMindForTraining(config)


def parameter_count(model):
    return sum(p.numel() for p in model.parameters())  # the tied matrix once
