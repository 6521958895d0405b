"""The output records MiniMind's forward returns: attributes from keyword arguments, missing ones read as None."""


class ModelOutput:
    def __init__(self, **fields):
        self.__dict__.update(fields)

    def __getattr__(self, name):  # only called for attributes that were not set
        if name.startswith("__"):
            raise AttributeError(name)
        return None

    def __getitem__(self, key):
        return self.__dict__[key]


class CausalLMOutputWithPast(ModelOutput):
    """MiniMind2-era model code (loss, logits, past_key_values, hidden_states; aux_loss set afterwards)."""


class MoeCausalLMOutputWithPast(ModelOutput):
    """minimind-3 model code (loss, aux_loss, logits, past_key_values, hidden_states)."""
