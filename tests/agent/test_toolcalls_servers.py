"""The parser reads what vLLM, llama.cpp and SGLang read (their Qwen3 XML tool-parser tests, as facts).

Their tools are not Leaf's, so each call below is an unknown tool: its parameters are read the way
those servers read them (a ``</parameter>`` followed by another ``<parameter=...>`` or by
``</function>`` ends a value; a ``<parameter=...>`` or ``</function>`` after a value that was never
closed ends it), values stay strings (no schema says otherwise), and the call's error names the
unknown tool. A Leaf tool with a parameter its schema does not know reads the same way and the
error names the parameter; Leaf's own parameters keep the schema-aware reading (test_toolcalls.py).
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frogtui.agent.toolcalls import StreamParser, parse_text
from tests.support import turn, xml_call


def calls(text: str) -> list[tuple[str, dict, str | None]]:
    return [(c.name, c.arguments, c.error) for c in parse_text(text, opens_reasoning=False).calls]


def weather(city: str, state: str, unit: str) -> str:
    return (
        "<tool_call>\n<function=get_current_weather>\n"
        f"<parameter=city>\n{city}\n</parameter>\n<parameter=state>\n{state}\n</parameter>\n"
        f"<parameter=unit>\n{unit}\n</parameter>\n</function>\n</tool_call>"
    )


UNKNOWN_WEATHER = "Unknown tool: get_current_weather"


# vLLM (tests/tool_use, qwen3coder): one call, with text before it, multi-line values, parallel calls
def test_an_unknown_tool_keeps_each_parameter_apart() -> None:
    assert calls(weather("Dallas", "TX", "fahrenheit")) == [
        ("get_current_weather", {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}, UNKNOWN_WEATHER)
    ]


def test_text_before_an_unknown_call_is_the_answer() -> None:
    p = parse_text("Sure! Let me check the weather for you." + weather("Dallas", "TX", "fahrenheit"), opens_reasoning=False)
    assert p.answer == "Sure! Let me check the weather for you."
    assert p.calls[0].arguments == {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}


def test_a_multi_line_value_of_an_unknown_tool_is_kept() -> None:
    text = (
        "<tool_call>\n<function=calculate_area>\n<parameter=shape>\nrectangle\n</parameter>\n"
        '<parameter=dimensions>\n{"width": 10, \n "height": 20}\n</parameter>\n<parameter=precision>\n2\n</parameter>\n'
        "</function>\n</tool_call>"
    )
    assert calls(text) == [
        ("calculate_area", {"shape": "rectangle", "dimensions": '{"width": 10, \n "height": 20}', "precision": "2"},
         "Unknown tool: calculate_area")
    ]


def test_parallel_unknown_calls_are_two_calls() -> None:
    text = weather("Dallas", "TX", "fahrenheit") + "\n" + weather("Orlando", "FL", "celsius")
    assert [args for _, args, _ in calls(text)] == [
        {"city": "Dallas", "state": "TX", "unit": "fahrenheit"},
        {"city": "Orlando", "state": "FL", "unit": "celsius"},
    ]


def test_a_missing_close_before_the_next_parameter_ends_the_value() -> None:
    text = weather("Dallas", "TX", "fahrenheit").replace("Dallas\n</parameter>", "Dallas")
    assert calls("Let me check the weather for you:\n" + text) == [
        ("get_current_weather", {"city": "Dallas", "state": "TX", "unit": "fahrenheit"}, UNKNOWN_WEATHER)
    ]


def test_values_on_the_tag_lines_and_a_missing_close_before_function() -> None:
    text = "<tool_call>\n<function=greet>\n<parameter=message>hello world</parameter>\n</function>\n</tool_call>"
    assert calls(text) == [("greet", {"message": "hello world"}, "Unknown tool: greet")]
    text = "<tool_call>\n<function=greet>\n<parameter=message>\nhello\n</function>\n</tool_call>"
    assert calls(text) == [("greet", {"message": "hello"}, "Unknown tool: greet")]


def test_a_function_tag_without_its_bracket_is_an_error_and_the_next_call_still_reads() -> None:
    text = (
        "<tool_call>\n<function=bad_func_no_gt\n</function>\n</tool_call>\n"
        "<tool_call>\n<function=get_current_weather>\n<parameter=city>Dallas</parameter>\n"
        "<parameter=state>TX</parameter>\n</function>\n</tool_call>"
    )
    (_, _, bad), good = calls(text)
    assert bad is not None and bad.startswith("ValueError: could not parse the tool call")
    assert good == ("get_current_weather", {"city": "Dallas", "state": "TX"}, UNKNOWN_WEATHER)


# SGLang (qwen3_coder_detector tests): values inline, implicit closes, empty values, quotes
def test_implicit_closes_for_every_parameter_of_an_unknown_tool() -> None:
    text = (
        "Text before\n\n<tool_call>\n<function=get_current_weather>\n<parameter=location>Paris\n"
        "<parameter=unit>celsius\n<parameter=days>3\n</function>\n</tool_call>"
    )
    assert calls(text) == [("get_current_weather", {"location": "Paris", "unit": "celsius", "days": "3"}, UNKNOWN_WEATHER)]


def test_an_empty_value_and_quotes_in_a_value() -> None:
    text = "<tool_call>\n<function=get_current_weather>\n<parameter=location></parameter>\n</function>\n</tool_call>"
    assert calls(text) == [("get_current_weather", {"location": ""}, UNKNOWN_WEATHER)]
    query = "SELECT * FROM users WHERE name = 'John \"Doe\"'"
    text = f"<tool_call>\n<function=sql_interpreter>\n<parameter=query>{query}</parameter>\n</function>\n</tool_call>"
    assert calls(text) == [("sql_interpreter", {"query": query}, "Unknown tool: sql_interpreter")]


def test_streamed_in_the_servers_chunks_gives_the_same_calls() -> None:
    chunks = [
        "Let me ", "help you.\n\n", "<tool_call>", "<function=get_current_weather>", "<parameter=location>",
        "Boston", "</parameter>", "<parameter=unit>celsius</parameter>", "</function>", "</tool_call>",
    ]
    p = StreamParser(opens_reasoning=False)
    for chunk in chunks:
        p.feed(chunk)
    p.finish()
    assert p.answer.strip() == "Let me help you."
    assert [(c.name, c.arguments, c.error) for c in p.calls] == [
        ("get_current_weather", {"location": "Boston", "unit": "celsius"}, UNKNOWN_WEATHER)
    ]


# llama.cpp (test-chat, Qwen3-Coder XML): indented tags, values trimmed, XML-like text in a value
def test_indented_tags_and_values_of_an_unknown_tool_are_trimmed() -> None:
    text = (
        "<tool_call>\n  <function=complex_function>\n    <parameter=name>\n      John Doe\n    </parameter>\n"
        "    <parameter=age>\n      30\n    </parameter>\n  </function>\n</tool_call>"
    )
    assert calls(text) == [("complex_function", {"name": "John Doe", "age": "30"}, "Unknown tool: complex_function")]


def test_xml_like_text_in_a_value_stays_in_the_value() -> None:
    text = (
        "<tool_call>\n<function=xml_function>\n<parameter=xml_content>\n<root><item>value</item></root>\n"
        "</parameter>\n</function>\n</tool_call>"
    )
    assert calls(text) == [("xml_function", {"xml_content": "<root><item>value</item></root>"}, "Unknown tool: xml_function")]


SPACED = [
    (" <tool_call>\n<function=special_function> <parameter=arg1>1\n</parameter>\n</function> </tool_call>\n\n", {"arg1": "1"}),
    ("<tool_call><function=compact_function><parameter=param>value</parameter></function></tool_call>", {"param": "value"}),
    ("<tool_call>\n  <function=blank>\n    <parameter=spaces>\n      \n    </parameter>\n  </function>\n</tool_call>", {"spaces": ""}),
    (
        "<tool_call>\n  <function=tabs>\n    <parameter=content>\nline1\n\tindented line\n    spaces\n    </parameter>\n"
        "  </function>\n</tool_call>",
        {"content": "line1\n\tindented line\n    spaces"},
    ),
]


@pytest.mark.parametrize(("text", "arguments"), SPACED)
def test_compact_and_spaced_forms(text: str, arguments: dict) -> None:
    name = text.split("<function=")[1].split(">")[0]
    assert calls(text) == [(name, arguments, f"Unknown tool: {name}")]


# a Leaf tool with a parameter its schema does not know ---------------------------------------------
def test_an_unknown_parameter_of_a_leaf_tool_is_read_apart_and_named() -> None:
    text = xml_call("Bash", command="ls", cwd="/tmp", description="list")
    assert calls(text) == [
        ("Bash", {"command": "ls", "cwd": "/tmp", "description": "list"}, "TypeError: Bash() got an unexpected keyword argument 'cwd'")
    ]


def test_an_unknown_parameter_never_closed_is_named_too() -> None:
    text = "<tool_call>\n<function=Bash>\n<parameter=cmd>\nls\n</function>\n</tool_call>"
    assert calls(text) == [("Bash", {"cmd": "ls"}, "TypeError: Bash() got an unexpected keyword argument 'cmd'")]
    text = "<tool_call>\n<function=Bash>\n<parameter=cmd>\nls\n<parameter=command>\npwd\n</parameter>\n</function>\n</tool_call>"
    assert calls(text) == [("Bash", {"cmd": "ls", "command": "pwd"}, "TypeError: Bash() got an unexpected keyword argument 'cmd'")]


def test_an_unknown_parameter_first_is_read_apart_too() -> None:
    text = xml_call("Read", path="a.py", file_path="a.py")
    assert calls(text) == [("Read", {"path": "a.py", "file_path": "a.py"}, "TypeError: Read() got an unexpected keyword argument 'path'")]


# a <tool_call> inside a parameter value is text ----------------------------------------------------
PARSER_TEST = (
    'def test_calls():\n    assert "<tool_call>" in render()\n'
    '    text = """<tool_call>\n<function=Bash>\n<parameter=command>\nls"""\n'
)
"""A test of a parser: an opening tag in a string, and a call example cut off on purpose."""


@pytest.mark.parametrize(
    "content",
    [
        'assert "<tool_call>" in text',
        "The model opens a call with `<tool_call>` and closes it with `</tool_call>` later.",
        "<tool_call>",
        PARSER_TEST,
        "text = f\"{CALL_OPEN}<tool_call>\"\nwhile '<tool_call>' in text: pass",
    ],
)
def test_a_write_whose_content_holds_an_opening_tag_is_one_call(content: str) -> None:
    p = parse_text(turn("", xml_call("Write", file_path="t.py", content=content), answer="Writing."))
    assert [(c.name, c.error) for c in p.calls] == [("Write", None)], p.calls
    assert p.calls[0].arguments == {"file_path": "t.py", "content": content}


TRUNCATED_FIXTURE = "Raw output cut off by the length limit:\n<tool_call>\n<function=Bash>\n<parameter=command>\nls -"
"""A parser's test data: a line that starts a call, never closed (on purpose)."""


def test_a_call_example_never_closed_in_a_value_is_text_once_the_turn_ends() -> None:
    write = xml_call("Write", file_path="tests/data/cut.txt", content=TRUNCATED_FIXTURE)
    p = parse_text(turn("", write, xml_call("Bash", command="pytest -q tests/data"), answer="Adding the fixture."))
    assert [(c.name, c.error) for c in p.calls] == [("Write", None), ("Bash", None)], p.calls
    assert p.calls[0].arguments["content"] == TRUNCATED_FIXTURE and p.calls[1].arguments == {"command": "pytest -q tests/data"}
    assert p.calls[0].raw == write and "ls -" not in p.answer


def test_a_call_still_open_at_the_end_is_cut_off_and_nothing_in_it_runs() -> None:
    example = "<tool_call>\n<function=Bash>\n<parameter=command>\ntouch M\n</parameter>\n</function>\n</tool_call>"
    p = parse_text(turn("", f"<tool_call>\n<function=Write>\n<parameter=content>\nA\n{example}\nB\n"))
    assert [(c.name, c.error) for c in p.calls] == [("", "ValueError: the tool call was cut off before </tool_call>")]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=10_000), max_size=30))
def test_any_split_gives_the_same_result_for_server_cases(cuts: list[int]) -> None:
    text = turn(
        "r",
        weather("Dallas", "TX", "fahrenheit"),
        xml_call("Write", file_path="t.py", content=PARSER_TEST),
        xml_call("Write", file_path="cut.txt", content=TRUNCATED_FIXTURE),
        xml_call("Bash", command="ls", cwd="/tmp"),
        answer="ok",
    )
    p = StreamParser()
    last = 0
    for cut in sorted({c % (len(text) + 1) for c in cuts}):
        p.feed(text[last:cut])
        last = cut
    p.feed(text[last:])
    p.finish()
    whole = parse_text(text)
    assert [(c.name, c.arguments, c.error) for c in p.calls] == [(c.name, c.arguments, c.error) for c in whole.calls]
    assert [c.name for c in whole.calls] == ["get_current_weather", "Write", "Write", "Bash"]
