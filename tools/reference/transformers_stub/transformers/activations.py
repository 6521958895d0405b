"""ACT2FN: activation name → a new activation module, as MiniMind's FeedForward looks it up."""
from torch import nn

_ACTIVATIONS = {"silu": nn.SiLU, "swish": nn.SiLU, "gelu": nn.GELU, "relu": nn.ReLU}


class _ActivationTable(dict):
    def __getitem__(self, name):
        return super().__getitem__(name)()


ACT2FN = _ActivationTable(_ACTIVATIONS)
