"""Files a user names on an admin command's line (``reassign``'s JSON plans, ``leader-election``'s partition list).

One reader for all of them, so each says the same thing about a file it cannot use: `reassign` caught only
`OSError`, and a file that was not UTF-8 ended it with a ``UnicodeDecodeError`` traceback, where
``leader-election`` said ``Error: cannot read <file>: 'utf-8' codec can't decode ...``.
"""

from __future__ import annotations

from pathlib import Path

from zkcontroller.admin.errors import AdminError


class UnreadableFileError(AdminError):
    """A named file that cannot be opened, or whose bytes are not UTF-8."""


def read_user_file(path: str | Path, option: str) -> str:
    """``path``'s text, decoded as UTF-8 (Kafka's ``Utils.readFileAsString`` reads it so); otherwise one
    `UnreadableFileError` naming ``option``, the file and why. Kafka's tools turn bytes that are not UTF-8 into
    U+FFFD and then fail on the JSON (or, worse, on a topic name holding it); here the encoding is the error."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise UnreadableFileError(f"cannot read {option} {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise UnreadableFileError(f"cannot read {option} {path}: {e}") from None
