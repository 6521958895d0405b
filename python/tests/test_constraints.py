"""generate()'s OpenAI-style keywords — penalties, logit_bias, json_schema/json_object, tools/tool_choice, think —
against `minigen generate` with the flags of the same names, and their checks."""
import json

import pytest

import minigen
from conftest import BASE, SFT, cli_generate_json

TIMINGS = {"load_ms", "ttft_ms", "itl_ms", "total_ms", "resident_bytes"}
VERSE = "The LORD is my shepherd"
QUESTION = "What is the weather in Paris?"
SCHEMA = {
    "type": "object",
    "properties": {"word": {"type": "string", "maxLength": 12}, "count": {"type": "integer"}},
    "required": ["word", "count"],
    "additionalProperties": False,
}
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "the weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


def without_timings(summary):
    return {key: value for key, value in summary.items() if key not in TIMINGS}


def write_json(tmp_path, name, value):
    path = tmp_path / name
    path.write_text(json.dumps(value))
    return str(path)


def test_penalties_logit_bias_and_top_p_rule_equal_the_program(base):
    plain = base.generate(VERSE, max_new_tokens=24, seed=4, num_return_sequences=2)
    banned = plain.token_ids[0][0]  # the first token the unbiased run chose
    kwargs = dict(max_new_tokens=24, seed=4, num_return_sequences=2, repetition_penalty=1.1, frequency_penalty=0.5,
                  presence_penalty=0.3, top_p_rule="hf")
    r = base.generate(VERSE, logit_bias={banned: -100, 17: 2.5}, **kwargs)
    cli = cli_generate_json("-m", BASE, "-p", VERSE, "-n", "24", "--seed", "4", "--num-return-sequences", "2",
                            "--repetition-penalty", "1.1", "--frequency-penalty", "0.5", "--presence-penalty", "0.3",
                            "--top-p-rule", "hf", "--logit-bias", f"{banned}=-100", "17=2.5", "--threads", "2")
    assert without_timings(r.summary) == without_timings(cli)
    assert r.settings["logit_bias"] == {str(banned): -100.0, "17": 2.5}
    assert all(banned not in row for row in r.token_ids)
    assert r.token_ids != plain.token_ids


def test_json_schema_output_parses_validates_and_equals_the_program(sft, tmp_path):
    kwargs = dict(chat=True, temperature=1.0, seed=3, num_return_sequences=4, max_new_tokens=128)
    r = sft.generate("Give a word and a count.", json_schema=SCHEMA, **kwargs)
    for text, reason in zip(r.texts, r.finish_reasons):
        assert reason == "stop"
        document = json.loads(text)
        assert set(document) == {"word", "count"}
        assert isinstance(document["word"], str) and len(document["word"]) <= 12
        assert isinstance(document["count"], int)
    assert all(len(s["grammar_allowed_tokens"]) == s["new_tokens"] for s in r.sequences)
    cli = cli_generate_json("-m", SFT, "--chat", "Give a word and a count.", "--temperature", "1.0", "--seed", "3",
                            "--num-return-sequences", "4", "-n", "128", "--threads", "2",
                            "--json-schema", write_json(tmp_path, "schema.json", SCHEMA))
    assert without_timings(r.summary) == without_timings(cli)
    # the same schema as a JSON string; and json_object
    assert sft.generate("Give a word and a count.", json_schema=json.dumps(SCHEMA), **kwargs).token_ids == r.token_ids
    # json_object: any object; the tiny model writes long strings, so some rows reach max_new_tokens inside one
    objects = sft.generate("Give a word and a count.", json_object=True, **{**kwargs, "max_new_tokens": 256})
    assert all(text.startswith("{") for text in objects.texts)
    stopped = [text for text, reason in zip(objects.texts, objects.finish_reasons) if reason == "stop"]
    assert stopped and all(isinstance(json.loads(text), dict) for text in stopped)
    cli = cli_generate_json("-m", SFT, "--chat", "Give a word and a count.", "--temperature", "1.0", "--seed", "3",
                            "--num-return-sequences", "4", "-n", "256", "--threads", "2", "--json-object")
    assert without_timings(objects.summary) == without_timings(cli)


@pytest.mark.parametrize("tool_choice", ["required", "get_weather"])
def test_forced_tool_calls_are_well_formed_and_equal_the_program(sft, tmp_path, tool_choice):
    r = sft.generate(QUESTION, chat=True, tools=TOOLS, tool_choice=tool_choice, temperature=1.0, seed=1,
                     num_return_sequences=3)
    for sequence in r.sequences:
        assert sequence["finish_reason"] == "stop"
        (call,) = sequence["tool_calls"]
        assert call["type"] == "function" and call["function"]["name"] == "get_weather"
        assert isinstance(json.loads(call["function"]["arguments"])["city"], str)
    cli = cli_generate_json("-m", SFT, "--chat", QUESTION, "--tools", write_json(tmp_path, "tools.json", TOOLS),
                            "--tool-choice", tool_choice, "--temperature", "1.0", "--seed", "1",
                            "--num-return-sequences", "3", "--threads", "2")
    assert without_timings(r.summary) == without_timings(cli)


def test_offered_tools_are_in_the_prompt(sft):
    messages = [{"role": "user", "content": QUESTION}]
    prompt = sft.detokenize(sft.chat_prompt(messages, tools=TOOLS))
    assert "<tools>" in prompt and '"name": "get_weather"' in prompt and prompt.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    auto = sft.generate(QUESTION, chat=True, tools=TOOLS, max_new_tokens=8, seed=2)
    offered = sft.generate(sft.chat_prompt(messages, tools=TOOLS), max_new_tokens=8, seed=2)
    assert auto.token_ids == offered.token_ids and auto.prompt_tokens == len(sft.chat_prompt(messages, tools=TOOLS))
    # tool_choice none leaves the tools out, as the API does
    none = sft.generate(QUESTION, chat=True, tools=TOOLS, tool_choice="none", max_new_tokens=8, seed=2)
    assert none.prompt_tokens == len(sft.tokenize(QUESTION, chat=True))


def test_a_tool_result_turn_renders_as_the_template_does(sft):
    call = {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    messages = [{"role": "user", "content": QUESTION},
                {"role": "assistant", "content": "", "tool_calls": [call]},
                {"role": "tool", "content": "sunny, 21 C"}]
    text = sft.detokenize(sft.chat_prompt(messages, tools=TOOLS))
    assert '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>' in text
    assert "<tool_response>\nsunny, 21 C\n</tool_response>" in text


def test_think_equals_the_program(sft):
    close = sft.tokenize("</think>", bos=False)
    assert len(close) == 1
    kwargs = dict(chat=True, think=True, max_new_tokens=24, seed=5, logit_bias={close[0]: -100})
    r = sft.generate("What does 'river' mean?", **kwargs)
    cli = cli_generate_json("-m", SFT, "--chat", "What does 'river' mean?", "--think", "-n", "24", "--seed", "5",
                            "--logit-bias", f"{close[0]}=-100", "--threads", "2")
    assert without_timings(r.summary) == without_timings(cli)
    (sequence,) = r.sequences
    assert sequence["content"] == "" and sequence["reasoning_content"]  # the block never closed: all of it is reasoning
    assert sequence["reasoning_content"] == sequence["text"].strip("\n")
    assert sft.detokenize(sft.tokenize("What does 'river' mean?", chat=True)).endswith("<think>\n\n</think>\n\n")


def test_bad_keywords_raise(sft):
    with pytest.raises(minigen.Error, match=f"logit_bias names token {sft.vocab_size}, outside the vocabulary"):
        sft.generate("x", logit_bias={sft.vocab_size: 1.0})
    with pytest.raises(minigen.Error, match="logit_bias"):
        sft.generate("x", logit_bias={1: 200.0})
    with pytest.raises(minigen.Error, match="logit_bias"):
        sft.stream("x", logit_bias={-1: 1.0})
    with pytest.raises(minigen.Error, match="frequency_penalty"):
        sft.generate("x", frequency_penalty=3.0)
    with pytest.raises(minigen.Error, match="presence_penalty"):
        sft.generate("x", presence_penalty=float("nan"))
    with pytest.raises(minigen.Error, match="top_p_rule must be one of minimind, hf, llamacpp; got 'x'"):
        sft.generate("x", top_p_rule="x")
    with pytest.raises(minigen.Error, match="json_schema: .*pattern"):
        sft.generate("x", json_schema={"type": "string", "pattern": "a+"})
    with pytest.raises(minigen.Error, match="json_schema: the string is not valid JSON"):
        sft.generate("x", json_schema="{")
    with pytest.raises(minigen.Error, match="json_schema: the string is nested more than 128 levels deep"):
        sft.generate("x", json_schema='{"items":' * 100000 + "{}" + "}" * 100000)
    with pytest.raises(minigen.Error, match="json_schema is nested more than 128 levels deep"):
        deep = {}
        for _ in range(200):
            deep = {"items": deep}
        sft.generate("x", json_schema=deep)
    with pytest.raises(minigen.Error, match="not both"):
        sft.generate("x", json_schema=SCHEMA, json_object=True)
    with pytest.raises(minigen.Error, match="needs tools"):
        sft.generate("x", chat=True, tool_choice="required")
    with pytest.raises(minigen.Error, match="chat=True"):
        sft.generate("x", tools=TOOLS)
    with pytest.raises(minigen.Error, match="tool_choice 'fly': no such function"):
        sft.generate("x", chat=True, tools=TOOLS, tool_choice="fly")
    with pytest.raises(minigen.Error, match="cannot be combined with json_schema"):
        sft.generate("x", chat=True, tools=TOOLS, tool_choice="required", json_object=True)
    with pytest.raises(minigen.Error, match='tools: every tool must be {"type": "function"'):
        sft.generate("x", chat=True, tools=[{"type": "function"}])
    with pytest.raises(minigen.Error, match=r"logit_bias must be a dict of token id \(int\) to bias"):
        sft.generate("x", logit_bias={"17": 1.0})


def test_schema_budgets_and_a_bias_that_bans_everything_raise(sft):
    """Issue 25: repeats collapse; past the compile budget, over the mask's step budget, or with nothing left to
    sample, generate() raises minigen.Error naming the part at fault instead of running for minutes."""
    r = sft.generate("Give me JSON.", chat=True, max_new_tokens=8, json_schema={"type": ["string"] * 20000})
    assert r.sequences[0]["text"].startswith('"')
    values = [f"value-{i}" for i in range(20000)]
    with pytest.raises(minigen.Error, match="json_schema: at /properties/a/enum: more than 1024 distinct alternatives"):
        sft.generate("x", json_schema={"type": "object", "properties": {"a": {"enum": values}}})
    strings = [{"type": "string", "maxLength": 100 + i} for i in range(1000)]
    with pytest.raises(minigen.Error, match=r"matcher steps \(1000 parses alive at once\)"):
        sft.generate("Give me JSON.", chat=True, max_new_tokens=8, json_schema={"anyOf": strings})
    with pytest.raises(minigen.Error, match=f"logit_bias bans every token: all {sft.vocab_size} ids have -100"):
        sft.generate("x", logit_bias={i: -100 for i in range(sft.vocab_size)})
