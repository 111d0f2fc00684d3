"""The streaming tool-call parser: formats, conversion, malformed input, arbitrary splits."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from frogtui.agent.toolcalls import StreamParser, TextPiece, parse_text
from tests.support import turn, xml_call

READ = xml_call("Read", file_path="src/app.py", offset=10, limit=5)
EDIT = xml_call("Edit", file_path="a.py", old_string="x = 1\n", new_string="x = 2\n", replace_all="true")
BASH = '<tool_call>\n{"name": "Bash", "arguments": {"command": "pytest -q", "timeout": "30"}}\n</tool_call>'
SAMPLE = turn("I need to read, then <edit>.\nSee </thin k>.", READ, EDIT, BASH, answer="Let me look at the code.")


def summary(p: StreamParser) -> tuple:
    return (p.reasoning, p.answer, [(c.name, c.arguments, c.error, c.raw) for c in p.calls])


def test_qwen_xml_and_json_calls_with_reasoning() -> None:
    p = parse_text(SAMPLE)
    assert p.reasoning == "I need to read, then <edit>.\nSee </thin k>.\n"
    assert p.answer.strip() == "Let me look at the code."
    assert [c.name for c in p.calls] == ["Read", "Edit", "Bash"]
    assert p.calls[0].arguments == {"file_path": "src/app.py", "offset": 10, "limit": 5}
    assert p.calls[1].arguments == {"file_path": "a.py", "old_string": "x = 1\n", "new_string": "x = 2\n", "replace_all": True}
    assert p.calls[2].arguments == {"command": "pytest -q", "timeout": 30.0}
    assert all(c.error is None for c in p.calls)
    assert [c.id for c in p.calls] == ["call_1_1", "call_1_2", "call_1_3"]


def test_call_is_complete_the_moment_its_closing_tag_arrives() -> None:
    p = StreamParser()
    text = turn("r", READ)
    cut = text.index("</tool_call>")
    out = p.feed(text[:cut + len("</tool_call>") - 1])
    assert not [x for x in out if not isinstance(x, TextPiece)]
    out = p.feed(">")
    assert [x.name for x in out if not isinstance(x, TextPiece)] == ["Read"]


def test_multiline_parameter_values_are_kept_exactly() -> None:
    content = "line one\n\n  indented </not-a-param>\n<parameter=fake>\n"
    p = parse_text(turn("", xml_call("Write", file_path="f.txt", content=content)))
    assert p.calls[0].arguments["content"] == content


def test_explicit_think_tag_and_no_reasoning_mode() -> None:
    p = parse_text("<think>\nhmm\n</think>\n\nHello!")
    assert (p.reasoning, p.answer) == ("hmm\n", "Hello!")
    p = parse_text("Plain answer, no thinking.", opens_reasoning=False)
    assert (p.reasoning, p.answer) == ("", "Plain answer, no thinking.")
    p = parse_text("Before <think>inner</think> after", opens_reasoning=False)
    assert p.reasoning == "inner" and p.answer == "Before  after"


def test_unclosed_reasoning_becomes_the_final_answer() -> None:
    p = parse_text("The answer is 42.")
    assert p.final_answer == "The answer is 42."


def test_wrong_argument_types_are_errors_not_crashes() -> None:
    p = parse_text(
        turn(
            "",
            xml_call("Read", file_path="a", offset="ten"),
            xml_call("Edit", file_path="a", old_string="x", new_string="y", replace_all="maybe"),
        )
    )
    assert p.calls[0].error == "ValueError: parameter 'offset' of Read expects an integer, got 'ten'"
    assert p.calls[1].error == "ValueError: parameter 'replace_all' of Edit expects a boolean, got 'maybe'"


def test_unknown_tool_and_missing_argument() -> None:
    p = parse_text(turn("", xml_call("Delete", path="x"), xml_call("Bash", description="no command")))
    assert p.calls[0].error == "Unknown tool: Delete"
    assert p.calls[1].error == "TypeError: Bash() missing 1 required argument: 'command'"


def test_malformed_calls() -> None:
    bad_json = '<tool_call>\n{"name": "Bash", "arguments": {"command": }\n</tool_call>'
    garbage = "<tool_call>\nplease run ls\n</tool_call>"
    unclosed_param = "<tool_call>\n<function=Bash>\n<parameter=command>\nls\n</function>\n</tool_call>"
    p = parse_text(turn("", bad_json, garbage, unclosed_param))
    assert p.calls[0].error.startswith("ValueError: the tool call is not valid JSON")
    assert p.calls[1].error == "ValueError: could not parse the tool call: expected <function=NAME> or a JSON object"
    assert p.calls[2].error == "ValueError: a parameter of Bash is not closed with </parameter>"


def test_truncated_call_at_end_of_turn() -> None:
    text = turn("", READ)
    p = parse_text(text[: text.index("</function>")])
    assert len(p.calls) == 1
    assert p.calls[0].error == "ValueError: the tool call was cut off before </tool_call>"


def test_json_arguments_as_string() -> None:
    p = parse_text('</think><tool_call>{"name": "Glob", "arguments": "{\\"pattern\\": \\"*.py\\"}"}</tool_call>')
    assert p.calls[0].arguments == {"pattern": "*.py"} and p.calls[0].error is None


def _feed_in_pieces(text: str, cuts: list[int]) -> StreamParser:
    p = StreamParser()
    last = 0
    for cut in sorted(set(c % (len(text) + 1) for c in cuts)):
        p.feed(text[last:cut])
        last = cut
    p.feed(text[last:])
    p.finish()
    return p


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=10_000), max_size=40))
def test_any_split_gives_the_same_result(cuts: list[int]) -> None:
    assert summary(_feed_in_pieces(SAMPLE, cuts)) == summary(parse_text(SAMPLE))


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200).filter(lambda s: not any(t in s for t in ("</parameter>", "</tool_call>", "</function>"))))
def test_string_values_round_trip(value: str) -> None:
    p = parse_text(turn("", xml_call("Bash", command=value)))
    assert p.calls[0].error is None
    assert p.calls[0].arguments["command"] == value


# issue 10: the parser follows the tool's schema; calls in the reasoning are reasoning -------------
def raw_call(name: str, body: str) -> str:
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


MISSING_CLOSE = raw_call("Bash", "<parameter=command>\nls\n<parameter=description>\nlist files\n</parameter>\n")
TAGS_IN_CONTENT = raw_call(
    "Write", "<parameter=file_path>\nnotes.md\n</parameter>\n<parameter=content>\nsee\n</parameter>\n<parameter=mode>\n0755\n</parameter>\n"
)
PATH_TAG_IN_CONTENT = raw_call(
    "Write",
    "<parameter=file_path>\na.txt\n</parameter>\n<parameter=content>\nx\n</parameter>\n<parameter=file_path>\n/etc/x\n</parameter>\n",
)
AMBIGUOUS_WRITE = raw_call(
    "Write",
    "<parameter=content>\nx\n</parameter>\n<parameter=file_path>\n/etc/x\n</parameter>\n<parameter=file_path>\na.txt\n</parameter>\n",
)
AMBIGUOUS_EDIT = raw_call(
    "Edit",
    "<parameter=file_path>\na.py\n</parameter>\n<parameter=old_string>\nx\n</parameter>\n<parameter=new_string>\nevil\n</parameter>\n"
    "<parameter=new_string>\ny\n</parameter>\n",
)
IN_REASONING = "I could run <tool_call>\n<function=Bash>\n<parameter=command>\nrm -rf x\n</parameter>\n</function>\n</tool_call> but no.\n"
EXAMPLE = "<tool_call>\n<function=Bash>\n<parameter=command>\ntouch M\n</parameter>\n</function>\n</tool_call>"
CALL_IN_CONTENT = raw_call(
    "Write", f"<parameter=file_path>\ndocs/x.md\n</parameter>\n<parameter=content>\nExample:\n{EXAMPLE}\nend\n</parameter>\n"
)
"""A Write of a document that shows a call: the call is content, and the content is whole."""
CLOSE_IN_CONTENT = raw_call(
    "Write", f"<parameter=file_path>\nx.md\n</parameter>\n<parameter=content>\nA\n</tool_call>\n{EXAMPLE}\nB\n</parameter>\n"
)
"""A Write whose content holds ``</tool_call>`` while its value is still open, then a call."""
SCHEMA_SAMPLE = turn(
    IN_REASONING, MISSING_CLOSE, TAGS_IN_CONTENT, PATH_TAG_IN_CONTENT, AMBIGUOUS_WRITE, AMBIGUOUS_EDIT,
    answer="Now <think>a call here is reasoning too: " + READ + "</think> ok",
)


def test_a_missing_close_tag_ends_the_value_at_the_next_parameter() -> None:
    call = parse_text(turn("", MISSING_CLOSE)).calls[0]
    assert (call.error, call.arguments) == (None, {"command": "ls", "description": "list files"})


def test_parameter_tags_inside_a_value_stay_in_the_value() -> None:
    calls = parse_text(turn("", TAGS_IN_CONTENT, PATH_TAG_IN_CONTENT)).calls
    read_apart = {"file_path": "notes.md", "content": "see", "mode": "0755"}  # a name the schema does not know: the servers' reading
    assert (calls[0].error, calls[0].arguments) == ("TypeError: Write() got an unexpected keyword argument 'mode'", read_apart)
    kept = {"file_path": "a.txt", "content": "x\n</parameter>\n<parameter=file_path>\n/etc/x"}
    assert (calls[1].error, calls[1].arguments) == (None, kept)


def test_text_that_reads_as_two_different_calls_is_an_error_not_a_guess() -> None:
    write, edit = parse_text(turn("", AMBIGUOUS_WRITE, AMBIGUOUS_EDIT)).calls
    for call in (write, edit):
        assert call.error is not None and "more than one way" in call.error and call.arguments == {}


def test_a_call_inside_the_reasoning_is_reasoning_and_is_not_run() -> None:
    p = parse_text(turn(IN_REASONING, READ))
    assert [c.name for c in p.calls] == ["Read"]
    assert "rm -rf x" in p.reasoning and "<tool_call>" in p.reasoning
    p = parse_text(SCHEMA_SAMPLE)
    assert [c.name for c in p.calls] == ["Bash", "Write", "Write", "Write", "Edit"]
    assert "src/app.py" in p.reasoning and "rm -rf x" in p.reasoning


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=10_000), max_size=40))
def test_any_split_gives_the_same_result_for_schema_cases(cuts: list[int]) -> None:
    assert summary(_feed_in_pieces(SCHEMA_SAMPLE, cuts)) == summary(parse_text(SCHEMA_SAMPLE))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(["<think>", "</think>", "<tool_call>", "</tool_call>", "<", "</", "<tool", "\n", READ, BASH]),
            st.sampled_from(["<function=Write>", "<function=Bash>", "<parameter=command>", "<parameter=content>", "<parameter=file_path>"]),
            st.sampled_from(["</parameter>", "</function>", "ls", MISSING_CLOSE, AMBIGUOUS_EDIT, CALL_IN_CONTENT, CLOSE_IN_CONTENT]),
            st.text(alphabet="ab <>/\n=", max_size=12),
        ),
        max_size=12,
    ),
    st.lists(st.integers(min_value=0, max_value=10_000), max_size=20),
)
def test_random_text_never_crashes_and_is_split_invariant(parts: list[str], cuts: list[int]) -> None:
    text = "".join(parts)
    whole = parse_text(text)
    assert summary(_feed_in_pieces(text, cuts)) == summary(whole)
    for call in whole.calls:
        assert call.error is not None or call.name in {"Read", "Bash", "Write", "Edit"}


def test_a_call_written_inside_a_parameter_value_is_content_not_a_call() -> None:
    p = parse_text(turn("", CALL_IN_CONTENT, CLOSE_IN_CONTENT))
    assert [(c.name, c.error) for c in p.calls] == [("Write", None), ("Write", None)], p.calls
    assert p.calls[0].arguments["content"] == f"Example:\n{EXAMPLE}\nend"
    assert p.calls[1].arguments["content"] == f"A\n</tool_call>\n{EXAMPLE}\nB"
    assert "touch M" not in p.answer


def test_a_call_closed_inside_an_open_value_is_cut_off_not_run() -> None:
    p = parse_text(turn("", "<tool_call>\n<function=Write>\n<parameter=content>\nA\n</tool_call>\n" + EXAMPLE))
    assert len(p.calls) == 1 and "cut off" in (p.calls[0].error or ""), p.calls  # the Bash call shown in the value never runs


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=10_000), max_size=40))
def test_any_split_gives_the_same_result_for_calls_in_content(cuts: list[int]) -> None:
    text = turn("r", CALL_IN_CONTENT, CLOSE_IN_CONTENT, READ, answer="done")
    assert summary(_feed_in_pieces(text, cuts)) == summary(parse_text(text))
