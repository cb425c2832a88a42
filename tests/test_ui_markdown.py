"""What a user typed is shown as typed; a model's reply keeps its Markdown but loads nothing.

Rendered with a real CommonMark renderer (markdown-it-py, which Gradio depends on); the
browser test checks the same in the page's own renderer.
"""

from __future__ import annotations

from html.parser import HTMLParser

import markdown_it  # the ui extra brings it (through gradio): required, never skipped
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from langgraph_librarian.ui._markdown import reply_markdown, user_markdown

RENDER = markdown_it.MarkdownIt("commonmark", {"breaks": True, "html": True})


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs.extend(attrs)
        if tag == "br":
            self.text.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "p":
            self.text.append("\n")

    def handle_data(self, data: str) -> None:
        # A newline in HTML source is layout, not text: lines show through <br>.
        self.text.append(data.replace("\n", ""))


def _render(markdown: str) -> _Page:
    page = _Page()
    page.feed(RENDER.render(markdown))
    return page


def _shown(text: str) -> str:
    lines = "".join(_render(user_markdown(text)).text).replace("\xa0", " ").split("\n")
    return "\n".join(line.rstrip() for line in lines).strip("\n")


TYPED = [
    '<img src=x onerror="alert(1)">',
    "<script>alert('x')</script> after",
    '<svg onload="alert(1)"><circle r=5></circle></svg>',
    "[click me](javascript:alert(1)) and **not bold** and _not italic_",
    "# not a heading",
    "1. not a list\n- nor this\n> nor a quote",
    "def f():\n    return '<b>x</b>'  # two spaces",
    "a &amp; b &lt; c \\* d `code` ~~e~~ | f | $$x$$",
    "---",
    "<http://example.com> and https://example.com",
]


@pytest.mark.parametrize("text", TYPED)
def test_typed_text_is_shown_as_typed(text: str) -> None:
    assert _shown(text) == text
    page = _render(user_markdown(text))
    assert set(page.tags) <= {"p", "br"}  # no link, image, script, heading, list, code...
    assert not page.attrs


printable = st.text(
    alphabet=st.characters(min_codepoint=32, max_codepoint=126) | st.sampled_from(["\n", "é"]),
    max_size=80,
)


@given(printable)
@example("a\n\n  b  c\n\n\n<i>d")
def test_any_typed_line_survives_the_renderer(text: str) -> None:
    # Blank lines separate paragraphs and trailing spaces are dropped: both invisible.
    expected = "\n".join(line.rstrip() for line in text.split("\n") if line.strip())
    shown = "\n".join(line for line in _shown(text).split("\n") if line.strip())
    assert shown == expected


def test_a_reply_keeps_its_markdown_but_loads_nothing() -> None:
    reply = (
        'A **bold** word, <img src=x onerror="alert(1)"> and ![pixel](https://e.example/p.png)'
        " then `<b>code</b>`\n\n```html\n<script>kept as code</script>\n```\n<script>x</script>"
    )
    page = _render(reply_markdown(reply))
    assert "strong" in page.tags and "code" in page.tags
    assert not {"img", "script"} & set(page.tags)
    text = "".join(page.text)
    assert '<img src=x onerror="alert(1)">' in text and "<script>kept as code</script>" in text
    assert "<b>code</b>" in text
    assert ("href", "https://e.example/p.png") in page.attrs  # the image became a link
