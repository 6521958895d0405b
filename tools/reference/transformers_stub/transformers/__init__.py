"""A stand-in for the classes of Hugging Face transformers that MiniMind's model_minimind.py (and the imports of its
trainer/rollout_engine.py) name.

Why it exists: Debian 12 packages torch but not transformers, and minigen's reference tools use Debian packages only.
make_lora_golden.py and tools/rollout/{make_rollout_fixtures,time_torch_rollout,drive_minigen_as_minimind}.py put the
directory above this package on sys.path so that MiniMind's OWN model code (and its model_lora.py and
trainer/rollout_engine.py) can be imported and run unchanged from a MiniMind checkout. Only what that code uses
is here (including the save_pretrained that SGLangRolloutEngine.update_policy calls, in saving.py); see
../README.md.
"""
from torch import nn

__all__ = ["PretrainedConfig", "PreTrainedModel", "GenerationMixin", "AutoTokenizer"]
__version__ = "0.0.0-minigen-stub"


class PretrainedConfig:
    """Keeps every keyword argument as an attribute (transformers also does this for keys it does not know)."""
    model_type = ""

    def __init__(self, **kwargs):
        for key, value in kwargs.items():
            setattr(self, key, value)

    def to_dict(self):
        return dict(vars(self))


class PreTrainedModel(nn.Module):
    """An nn.Module with a config. No weight initialisation: callers load every weight from a file."""
    config_class = PretrainedConfig

    def __init__(self, config, *args, **kwargs):
        nn.Module.__init__(self)
        self.config = config

    def post_init(self):
        """transformers initialises and ties weights here; MiniMind ties lm_head and embed_tokens itself."""

    @property
    def device(self):
        return next(self.parameters()).device

    @property
    def dtype(self):
        return next(self.parameters()).dtype

    def save_pretrained(self, save_directory, state_dict=None, safe_serialization=True, **kwargs):
        """The files transformers 4.57 writes with safe_serialization=False (config.json, generation_config.json,
        pytorch_model.bin), as MiniMind's SGLangRolloutEngine.update_policy calls it; see saving.py."""
        from . import saving
        saving.save_pretrained(self, save_directory, state_dict=state_dict, safe_serialization=safe_serialization,
                               **kwargs)


class GenerationMixin:
    """Empty: MiniMind's model defines its own generate()."""


class AutoTokenizer:
    """So that MiniMind's trainer/rollout_engine.py imports (its SGLang engine loads a tokenizer with it; the torch
    engine that tools/rollout/time_torch_rollout.py times does not). There is no tokenizer here: from_pretrained
    raises, unless a script has installed a factory, `AutoTokenizer.factory = callable(path, **kwargs)`, whose
    result it returns (tools/rollout/drive_minigen_as_minimind.py installs a small stand-in that way)."""
    factory = None

    @classmethod
    def from_pretrained(cls, *args, **kwargs):
        if cls.factory is None:
            raise NotImplementedError("transformers_stub has no tokenizer (tools/reference/transformers_stub/README.md)"
                                      "; set transformers.AutoTokenizer.factory to supply one")
        return cls.factory(*args, **kwargs)
