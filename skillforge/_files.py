"""Which file a path names: derived state (the run log, the metadata cache, the Chroma store) is
opened once and kept open, so a file deleted or replaced under a running process must be noticed."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["identity"]


def identity(path: Path | str) -> tuple[int, int] | None:
    """Which file is at ``path`` (device, inode), or None: a file deleted and made again is another file."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino
