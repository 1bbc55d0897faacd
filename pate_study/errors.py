"""Error messages: one line each (file or flag, problem, fix), whatever the underlying library printed."""
from __future__ import annotations

__all__ = ["one_line"]


def one_line(message: object) -> str:
    """``message`` as a single line: blank lines dropped, the others stripped and joined with ``"; "``.

    Parser errors from pandas or xml carry embedded newlines; joined here, every error the CLIs print
    stays on one line (so ``2>err.txt; head -1`` or a log grep sees the whole message).
    """
    return "; ".join(part.strip() for part in str(message).splitlines() if part.strip())
