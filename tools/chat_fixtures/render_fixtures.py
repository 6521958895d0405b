#!/usr/bin/env python3
"""Renders minigen's chat-template test conversations with a reference Jinja template, the way HF transformers'
apply_chat_template does, and writes them with the expected text as tests/data/chat_template/minimind3_cases.json.
The C++ tests (src/chat/chat_template_fixture_test.cpp) compare minigen's rendering with every case byte for byte.

The reference is minimind-3's chat_template, from the tokenizer_config.json of jingyaogong/minimind (model/) or of the
minimind-3 model on the Hugging Face hub. It is not stored in this repository (its text is not ours to copy): download
that tokenizer_config.json (or its chat_template as a .jinja file) anywhere outside the repo and pass its path.

    python3 tools/chat_fixtures/render_fixtures.py --reference /tmp/minimind-3/tokenizer_config.json   # writes
    python3 tools/chat_fixtures/render_fixtures.py --check                                             # no reference

Either way the script also renders every case with minigen's own template (src/tokenizer/chat_template.jinja, the one
shipped in every tokenizer_config.json minigen writes) and fails unless it gives the same text: with --reference,
against the reference; with --check, against the stored fixtures.

Needs Debian's python3-jinja2 (apt-get install python3-jinja2); transformers itself is not needed.
"""
import argparse
import json
import sys
from pathlib import Path

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = Path(__file__).resolve().parents[2]
OUR_TEMPLATE = ROOT / "src" / "tokenizer" / "chat_template.jinja"
FIXTURES = ROOT / "tests" / "data" / "chat_template" / "minimind3_cases.json"


def environment():
    """transformers' settings: a sandbox, trim_blocks and lstrip_blocks, loop controls, its own tojson (json.dumps with
    ensure_ascii=False and the default separators, keys in insertion order) and raise_exception."""
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])

    def tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    return env


def load_template(path):
    text = Path(path).read_text(encoding="utf-8")
    if Path(path).suffix == ".json":
        text = json.loads(text)["chat_template"]
    return environment().from_string(text)


def render(template, case):
    keywords = {"messages": case["messages"], "add_generation_prompt": case["add_generation_prompt"]}
    if case["tools"] is not None:
        keywords["tools"] = case["tools"]
    if case["open_thinking"]:
        keywords["open_thinking"] = True
    return template.render(**keywords)


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather of a city",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name, e.g. 北京"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}
CLOCK = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "The time now, \"HH:MM\"\tin a time zone\\region",
        "parameters": {"type": "object", "properties": {"zone": {"type": "string", "default": None}},
                       "required": [], "additionalProperties": False, "x-limits": [0.5, -2.25, 1e-07, 1e21, 3.0,
                                                                                    12345678901234567890, True]},
    },
}


def call(name, arguments, call_id="call_0", wrapped=True):
    if not wrapped:
        return {"name": name, "arguments": arguments}
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def case(name, messages, tools=None, add_generation_prompt=True, open_thinking=False):
    return {"name": name, "messages": messages, "tools": tools, "add_generation_prompt": add_generation_prompt,
            "open_thinking": open_thinking}


def cases():
    user = {"role": "user", "content": "What's the weather in Beijing?"}
    return [
        case("user_thinking_off", [{"role": "user", "content": "Hi"}]),
        case("user_thinking_on", [{"role": "user", "content": "Why is the sky blue?"}], open_thinking=True),
        case("system_multi_turn", [
            {"role": "system", "content": "You are helpful."}, {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "2+2?"}]),
        case("system_multi_turn_thinking_on", [
            {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "2+2?"}], open_thinking=True),
        case("no_generation_prompt", [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}],
             add_generation_prompt=False),
        case("system_not_first", [
            {"role": "user", "content": "a"}, {"role": "system", "content": "Switch to French."},
            {"role": "user", "content": "b"}]),
        case("reasoning_content_in_history", [
            {"role": "user", "content": "2+2?"},
            {"role": "assistant", "content": "\n4", "reasoning_content": "\n\nTwo plus two is four.\n"},
            {"role": "user", "content": "And 3+3?"},
            {"role": "assistant", "content": "6", "reasoning_content": ""},
            {"role": "user", "content": "Thanks"}], open_thinking=True),
        case("think_block_in_content", [
            {"role": "user", "content": "2+2?"},
            {"role": "assistant", "content": "<think>\nadd them\n\n</think>\n\n4"},
            {"role": "user", "content": "3+3?"},
            {"role": "assistant", "content": "early </think>\nmiddle</think>\n\nlate"},
            {"role": "user", "content": "ok"}]),
        case("tools_with_system", [{"role": "system", "content": "You are a weather bot."}, user],
             tools=[WEATHER, CLOCK]),
        case("tools_without_system", [user], tools=[WEATHER], open_thinking=True),
        case("empty_tools_list", [{"role": "system", "content": "S"}, user], tools=[]),
        case("tool_call_object_arguments", [
            user,
            {"role": "assistant", "content": "", "tool_calls": [call("get_weather", {"city": "北京", "unit": "celsius"})]},
            {"role": "tool", "tool_call_id": "call_0", "content": "{\"temp_c\": 21, \"sky\": \"晴\"}"}],
             tools=[WEATHER]),
        case("tool_call_string_arguments", [
            user,
            {"role": "assistant", "content": None,
             "tool_calls": [call("get_weather", "{\"city\":\"Beijing\" , \"unit\": null}")]},
            {"role": "tool", "content": "sunny"}],
             tools=[WEATHER], open_thinking=True),
        case("tool_call_after_content_and_reasoning", [
            user,
            {"role": "assistant", "content": "Let me look that up.", "reasoning_content": "Need the tool.",
             "tool_calls": [call("get_weather", {"city": "Beijing"})]},
            {"role": "tool", "content": "cloudy"},
            {"role": "assistant", "content": "It is cloudy."},
            {"role": "user", "content": "And now?"}],
             tools=[WEATHER, CLOCK]),
        case("parallel_calls_merged_responses", [
            {"role": "system", "content": "Answer with tools."},
            {"role": "user", "content": "Weather in Paris and the time in Tokyo?"},
            {"role": "assistant", "content": "Checking both.",
             "tool_calls": [call("get_weather", {"city": "Paris"}, "call_a"),
                            call("get_time", {"zone": "Asia/Tokyo", "precise": True, "digits": [1, 2.5]}, "call_b")]},
            {"role": "tool", "tool_call_id": "call_a", "content": "rain, 12°C"},
            {"role": "tool", "tool_call_id": "call_b", "content": "09:30"},
            {"role": "assistant", "content": "Rainy in Paris; 09:30 in Tokyo."},
            {"role": "user", "content": "Thanks!"}],
             tools=[WEATHER, CLOCK]),
        case("tool_calls_without_function_wrapper", [
            user,
            {"role": "assistant", "content": "\n",
             "tool_calls": [call("get_weather", {"city": "Oslo"}, wrapped=False),
                            call("get_time", "{}", wrapped=False)]},
            {"role": "tool", "content": "snow"}, {"role": "tool", "content": "noon"}, {"role": "tool", "content": ""}],
             tools=[WEATHER, CLOCK]),
        case("tool_response_first", [{"role": "tool", "content": "orphan"}, {"role": "user", "content": "hm?"}]),
        case("non_ascii_and_escapes", [
            {"role": "system", "content": "你是一个乐于助人的助手。"},
            {"role": "user", "content": "Ünïcödé ✓ 😀 \"quotes\" \\ back\tslash\nnew line <|im_end|>"},
            {"role": "assistant", "content": "好的 😀",
             "tool_calls": [call("get_weather", {"city": "Zürich \"CH\"", "note": "a\\b\n\u0001\u001f\u007f é 😀"})]},
            {"role": "tool", "content": "Ok ✓"}],
             tools=[WEATHER]),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--reference", help="tokenizer_config.json or .jinja holding minimind-3's chat_template")
    mode.add_argument("--check", action="store_true", help="compare minigen's template with the stored fixtures")
    args = parser.parse_args()

    ours = load_template(OUR_TEMPLATE)
    if args.check:
        stored = json.loads(FIXTURES.read_text(encoding="utf-8"))["cases"]
    else:
        reference = load_template(args.reference)
        stored = [dict(c, expected=render(reference, c)) for c in cases()]
    mismatches = [c["name"] for c in stored if render(ours, c) != c["expected"]]
    if mismatches:
        sys.exit("minigen's template differs from the reference in: " + ", ".join(mismatches))
    if not args.check:
        FIXTURES.parent.mkdir(parents=True, exist_ok=True)
        document = {"about": "Rendered by tools/chat_fixtures/render_fixtures.py with minimind-3's chat_template "
                             "(jinja2, as transformers' apply_chat_template); expected is the rendered text.",
                    "cases": stored}
        FIXTURES.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{len(stored)} cases: minigen's template renders each as the reference does")


if __name__ == "__main__":
    main()
