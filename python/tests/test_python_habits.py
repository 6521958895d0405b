"""What Hugging Face users expect of the module: model.config, ids as the prompt, one clear error for an unknown
keyword, defaults shown as written, detokenize typed as str."""
import json
import subprocess

import pytest

import minigen
from conftest import SFT, minigen_binary


def test_config_equals_minigen_info_and_has_config_json_names(sft):
    done = subprocess.run([minigen_binary(), "info", SFT, "--json"], capture_output=True, text=True, check=True)
    info = json.loads(done.stdout)
    config = sft.config
    for key, value in info.items():
        if key != "path":
            assert config[key] == value, key
    assert (config.hidden_size, config.num_hidden_layers, config.num_attention_heads, config.num_key_value_heads) == (256, 4, 8, 2)
    assert (config.head_dim, config.intermediate_size, config.vocab_size, config.max_position_embeddings) == (32, 832, 6400, 32768)
    assert (config.rope_theta, config.qk_norm, config.use_moe, config.moe, config.family) == (1e6, True, False, None, "tiny")
    assert (config.layers, config.q_heads, config.kv_heads, config.context, config.weights, config.weight_type) == (4, 8, 2, 32768, "f32", "f32")
    assert config.kv_bytes_per_token == 2048 == sft.kv_bytes_per_token
    assert dict(config) == config.to_dict() and dict(config)["hidden_size"] == 256
    assert "hidden_size" in config and "hidden_size" in dir(config)
    assert repr(config).startswith("minigen.ModelConfig({'architectures': ['Qwen3ForCausalLM'], ")
    with pytest.raises(AttributeError, match="minigen.ModelConfig has no field 'hiden_size'; did you mean 'hidden_size'\\?"):
        config.hiden_size
    with pytest.raises(KeyError):
        config["nope"]


def test_token_ids_as_the_prompt(sft):
    r = sft.generate([1, 2, 3], max_new_tokens=5, seed=1)
    assert r.prompt_tokens == 3
    assert r.token_ids == [[234, 43, 413, 44, 234]]
    assert r.texts == ["\n(adjective)\n"] == [sft.detokenize(r.token_ids[0])]
    assert sft.generate((1, 2, 3), max_new_tokens=5, seed=1).token_ids == r.token_ids
    numpy = pytest.importorskip("numpy")
    assert sft.generate(numpy.array([1, 2, 3]), max_new_tokens=5, seed=1).token_ids == r.token_ids
    assert "".join(sft.stream([1, 2, 3], max_new_tokens=5, seed=1)) == r.texts[0]


def test_a_list_of_prompts_or_a_bad_prompt_is_one_clear_error(sft):
    batch = r"one prompt per call: a str or a list of token ids, not a list of prompts \(num_return_sequences=N samples one prompt N times\)"
    with pytest.raises(minigen.Error, match=batch):
        sft.generate([[1, 2], [3]])
    with pytest.raises(minigen.Error, match=batch):
        sft.generate(["a", "b"])
    with pytest.raises(minigen.Error, match=r"^prompt must be a str or a list of token ids \(ints\), got int$"):
        sft.generate(5)
    with pytest.raises(minigen.Error, match=r"^prompt must be a str or a list of token ids \(ints\), got \[1.5\]$"):
        sft.generate([1.5])


@pytest.mark.parametrize("call, message", [
    (lambda m: m.generate("x", do_sample=False), "Model.generate(): unknown keyword 'do_sample'; use greedy=True (or temperature=0)"),
    (lambda m: m.generate("x", do_sample=True), "Model.generate(): unknown keyword 'do_sample'; minigen samples unless greedy=True: leave do_sample out"),
    (lambda m: m.generate("x", max_length=9), "Model.generate(): unknown keyword 'max_length'; minigen uses max_new_tokens, which counts the new tokens only (not the prompt)"),
    (lambda m: m.generate(input_ids=[1, 2], max_new_tokens=3), "Model.generate(): unknown keyword 'input_ids'; pass the token ids as the prompt, the first argument: a list of ints"),
    (lambda m: m.generate("x", n=2), "Model.generate(): unknown keyword 'n'; minigen uses num_return_sequences"),
    (lambda m: m.generate("x", temprature=0.5), "Model.generate(): unknown keyword 'temprature'; did you mean 'temperature'?"),
    (lambda m: m.stream("x", temp=1.0), "Model.stream(): unknown keyword 'temp'; did you mean 'temperature'?"),
    (lambda m: m.tokenize("x", add_special_tokens=False), "Model.tokenize(): unknown keyword 'add_special_tokens'; minigen uses bos=True or bos=False"),
    (lambda m: m.detokenize([1], skip_special=True), "Model.detokenize(): unknown keyword 'skip_special'; did you mean 'skip_special_tokens'?"),
    (lambda m: m.forward([1], cach=None), "Model.forward(): unknown keyword 'cach'; did you mean 'cache'?"),
    (lambda m: m.new_cache(size=8), "Model.new_cache(): unknown keyword 'size'; the keywords are capacity"),
    (lambda m: m.new_cache().truncate(lenght=1), "Cache.truncate(): unknown keyword 'lenght'; did you mean 'length'?"),
    (lambda m: m.chat_prompt([], tool=[]), "Model.chat_prompt(): unknown keyword 'tool'; did you mean 'tools'?"),
    (lambda m: minigen.Model(SFT, torch_dtype="float32"), "Model(): unknown keyword 'torch_dtype'; minigen uses weights='f32', 'f16', 'bf16', 'q8' or 'q4'"),
    (lambda m: minigen.Model(SFT, device="cuda"), "Model(): unknown keyword 'device'; minigen runs on the CPU: threads=N sets how many cores (0: one per core)"),
])
def test_an_unknown_keyword_is_one_error_naming_the_nearest(sft, call, message):
    with pytest.raises(minigen.Error) as raised:
        call(sft)
    assert str(raised.value) == message


def test_an_unknown_keyword_without_a_near_one_lists_the_keywords(sft):
    with pytest.raises(minigen.Error) as raised:
        sft.generate("x", foo=1)
    assert str(raised.value).startswith("Model.generate(): unknown keyword 'foo'; the keywords are prompt, chat, system, ")
    assert str(raised.value).endswith(", ignore_eos, num_return_sequences")


def test_known_keywords_and_conversions_still_work(sft):
    assert sft.generate(prompt="x", max_new_tokens=2, temperature=1, seed=1).token_ids[0] == \
        sft.generate("x", max_new_tokens=2, temperature=1.0, seed=1).token_ids[0]
    with pytest.raises(TypeError):
        sft.forward("not ids")


def test_help_shows_the_real_signature_with_defaults_as_written():
    doc = minigen.Model.generate.__doc__
    assert doc.startswith("generate(self: minigen.Model, prompt: object, *, chat: bool = False, ")
    for default in ["max_new_tokens: int = 256", "temperature: float = 0.85", "top_p: float = 0.85", "top_k: int = 50",
                    "min_p: float = 0.0", "repetition_penalty: float = 1.0", "seed: object = 0",
                    "num_return_sequences: int = 1) -> minigen.GenerateResult"]:
        assert default in doc, default
    assert "**kwargs" not in doc and "0.8500000238418579" not in doc
    assert "temperature: float = 0.85" in minigen.Model.stream.__doc__
    assert minigen.Model.__init__.__doc__.startswith("Model(path: str, *, weights: str = '', threads: int = 0, heads: int = 8, ")
    assert minigen.Model.detokenize.__doc__.startswith(
        "detokenize(self: minigen.Model, ids: List[int], *, skip_special_tokens: bool = False) -> str")


def test_detokenize_returns_str(sft):
    text = sft.detokenize(sft.tokenize("river"), skip_special_tokens=True)
    assert type(text) is str and text == "river"
