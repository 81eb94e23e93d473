"""Bad input, said plainly: an empty (or invisible) sentence, one longer than the page takes or than the model reads,
and one mostly outside what the model knows (emoji, a script it never read). Pure: no Streamlit."""
from __future__ import annotations

from playground.inputs import visible
from runtime.text import Translation

from .link import MAX_TEXT


def text_problem(text: str | None) -> str | None:
    """Why this text cannot be experimented on, or None. (Over-long text is cut, not refused: translation_notes.)"""
    if not text or not visible(text):
        return "Type a sentence to experiment on (the box is empty, or holds only spaces or invisible characters)."
    if len(text) > MAX_TEXT:
        return (f"This text is {len(text)} characters long; the Experiments page takes at most {MAX_TEXT} (one "
                "sentence or two). Shorten it.")
    return None


def translation_notes(t: Translation, text: str) -> list[str]:
    """What the reader must know about what the model saw: cut to its length limit; mostly unknown to it."""
    notes = []
    if t.truncated:
        notes.append(f"Input too long: the model reads at most {len(t.src_tokens)} tokens (its tag and </s> "
                     "included), so the end of the sentence was cut; every experiment here works on what it saw.")
    if t.warning:
        notes.append(t.warning)
    return notes
