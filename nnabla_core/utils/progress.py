"""Progress of long tasks (``nnabla.utils.progress``): a state file that other programs
poll, the progress callback of :mod:`nnabla.utils.callback`, an optional Python
callback, and the console bars (tqdm) of data-set and cache building and the CLI.

The state file holds one line, ``"<state> (<percent>%)"``, rewritten at most once a
second (every call with ``state=None`` clears it at once), as nnabla writes it.
"""
from __future__ import annotations

import time

from nnabla._atomic import write_atomically
from nnabla.config import nnabla_config
from nnabla.logger import logger

from . import callback

state_file_name = ""
state_callback = None
_last_write = [0.0]
_WRITE_INTERVAL = 1.0       # seconds between two writes of the state file
_WRITE_RETRIES = 100


def configure_progress(file_name, cb=None):
    """Write progress to ``file_name`` from now on (None: keep the current file) and call
    ``cb(state, progress)`` on every update (None: keep the current callback); clears the
    state file."""
    global state_file_name, state_callback
    if file_name is not None:
        state_file_name = file_name
    if cb is not None:
        state_callback = cb
    progress(None)


def _write_state(text):
    for attempt in range(1, _WRITE_RETRIES + 1):
        try:        # atomic: readers never see a half-written line
            write_atomically(state_file_name, lambda f: f.write(text), "w")
            return
        except OSError:
            if attempt == _WRITE_RETRIES:
                logger.critical(f"Failed to write to {state_file_name}.")
                raise
            time.sleep(0.1)


def progress(state, progress=0.0):
    """Report ``state`` (a str, or None to clear) at ``progress`` (a fraction in [0, 1])."""
    now = time.monotonic()
    if state_file_name and (state is None or now - _last_write[0] >= _WRITE_INTERVAL):
        _last_write[0] = now
        _write_state("" if state is None else f"{state} ({progress * 100:3.2f}%)")
    callback.update_progress(f"{state} ({progress * 100:3.2f}%)")
    if state_callback is not None:
        state_callback(state, progress)


def show_progress():
    """Whether console progress bars are wanted (``[MISC] misc_show_progress``)."""
    return nnabla_config.get("MISC", "misc_show_progress", fallback="True").lower() == "true"


def progress_bar(total, desc):
    """A tqdm bar over ``total`` steps (disabled when ``misc_show_progress`` is false)."""
    from tqdm import tqdm
    return tqdm(total=total, desc=desc, disable=not show_progress(), leave=False)
