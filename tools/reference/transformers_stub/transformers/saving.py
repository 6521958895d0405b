"""PreTrainedModel.save_pretrained(save_directory, state_dict=..., safe_serialization=False) for MiniMind's model: the
files transformers 4.57 writes (MiniMind's requirements.txt pins transformers==4.57.6), byte for byte where it
matters to a loader.

MiniMind's SGLangRolloutEngine.update_policy (trainer/rollout_engine.py) does
    state_dict = {k: v.detach().half().cpu() for k, v in unwrapped.state_dict().items()}
    unwrapped.save_pretrained(abs_path, state_dict=state_dict, safe_serialization=False)
and these are the files that leaves (tools/rollout/make_rollout_fixtures.py writes tests/data/rollout with it):
  config.json              PretrainedConfig.to_json_string(use_diff=True): json.dumps(indent=2, sort_keys=True) + "\\n"
                           of the attributes that differ from a bare PretrainedConfig's (every attribute MiniMindConfig
                           sets itself is kept; tie_word_embeddings = true equals the base default and is left out),
                           plus architectures, model_type, transformers_version and "dtype" (4.56+ spelling, not
                           "torch_dtype"): the dtype of the model's parameters at save time ("float32" for a policy
                           trained in fp32 under autocast, as MiniMind's GRPO does), whatever the saved tensors' dtype
  generation_config.json   GenerationConfig.from_model_config(config), diff form (written for any model that can
                           generate; MiniMindForCausalLM subclasses GenerationMixin)
  pytorch_model.bin        torch.save (zip format) of the state_dict passed (or the model's own), tensors made
                           .contiguous(): one shard, keys in state_dict order; both model.embed_tokens.weight and
                           lm_head.weight when both are in it (transformers drops tied aliases only on its
                           safetensors path)
Not emulated: safe_serialization=True (model.safetensors; NotImplementedError), sharding (max_shard_size; the models
this is for are far below transformers' 5 GB default), push_to_hub, and the mutation of model.config
(transformers sets config.architectures and config.dtype on the live config; here they go to the file only). As
transformers does, files already in save_directory stay, except stale shards "pytorch_model-0000i-of-0000n.bin".
"""
import json
import os
import pathlib
import re

import torch

TRANSFORMERS_VERSION = "4.57.6"  # the version whose file layout this writes (MiniMind's requirements.txt pin)
WEIGHTS_NAME = "pytorch_model.bin"
CONFIG_NAME = "config.json"
GENERATION_CONFIG_NAME = "generation_config.json"
# Base-PretrainedConfig attributes that MiniMindConfig sets, with transformers' default: to_diff_dict leaves a key
# out when its value equals this default. Keys MiniMindConfig adds are all kept.
BASE_CONFIG_DEFAULTS = {"tie_word_embeddings": True, "bos_token_id": None, "eos_token_id": None,
                        "pad_token_id": None, "architectures": None, "dtype": None}
_SHARD = re.compile(r"(.*?)-\d{5}-of-\d{5}")


def config_json(model):
    """config.json as transformers 4.57's PreTrainedModel.save_pretrained writes it (see the module docstring)."""
    values = dict(vars(model.config))
    # save_pretrained: config.dtype = str(get_parameter_dtype(model)).split(".")[1]; architectures = [class name]
    values["dtype"] = str(next(model.parameters()).dtype).split(".")[1]
    values["architectures"] = [type(model).__name__]
    values = {key: value for key, value in values.items()
              if not (key in BASE_CONFIG_DEFAULTS and value == BASE_CONFIG_DEFAULTS[key])}
    values["model_type"] = type(model.config).model_type
    values["transformers_version"] = TRANSFORMERS_VERSION
    return json.dumps(values, indent=2, sort_keys=True) + "\n"


def generation_config_json(model):
    """GenerationConfig.from_model_config(config).to_json_string(use_diff=True): the config's non-None generation
    attributes (MiniMind sets only bos/eos) and _from_model_config."""
    values = {"_from_model_config": True, "transformers_version": TRANSFORMERS_VERSION}
    for key in ("bos_token_id", "eos_token_id", "pad_token_id", "decoder_start_token_id"):
        value = getattr(model.config, key, None)
        if value is not None:
            values[key] = value
    return json.dumps(values, indent=2, sort_keys=True) + "\n"


def save_pretrained(model, save_directory, state_dict=None, safe_serialization=True, **kwargs):
    """What transformers 4.57's model.save_pretrained(save_directory, state_dict=state_dict,
    safe_serialization=False) leaves in save_directory (see the module docstring). Other keyword arguments
    (is_main_process, max_shard_size, …) are accepted and ignored."""
    if safe_serialization:
        raise NotImplementedError("transformers_stub saves only with safe_serialization=False (pytorch_model.bin), "
                                  "as MiniMind's update_policy does")
    directory = pathlib.Path(save_directory)
    if directory.is_file():
        raise ValueError(f"Provided path ({save_directory}) should be a directory, not a file")
    directory.mkdir(parents=True, exist_ok=True)
    if state_dict is None:
        state_dict = model.state_dict()
    (directory / CONFIG_NAME).write_text(config_json(model))
    (directory / GENERATION_CONFIG_NAME).write_text(generation_config_json(model))
    # "Clean the folder from a previous save": stale shards of the same weights name, nothing else.
    for name in os.listdir(directory):
        stem = name.replace(".bin", "").replace(".safetensors", "")
        if (name.startswith(WEIGHTS_NAME.replace(".bin", "")) and (directory / name).is_file()
                and name != WEIGHTS_NAME and _SHARD.fullmatch(stem)):
            (directory / name).unlink()
    torch.save({key: value.contiguous() for key, value in state_dict.items()}, directory / WEIGHTS_NAME)
