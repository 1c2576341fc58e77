"""A CSV file input that checks the file's size in the browser, before anything is sent.

Panel's ``FileInput`` (Bokeh's) reads any file the user picks and sends it in one websocket message: a file over
Bokeh's 20 MiB message limit drops the page's connection without a word, and a smaller large one reaches the server
whole before anything can refuse it. :class:`CSVFileInput` looks at the file's size first: a file over
``max_bytes`` is refused in the browser (only its name and size are sent, and the tab says why); a file within it
is sent as one message, and the server checks it again (:func:`explorer.views.common.files.uploads.read_upload`).
"""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Callable

import param
from panel.custom import JSComponent

from explorer.views.common.files.uploads import MAX_UPLOAD_BYTES

__all__ = ["CSVFileInput", "too_large_message"]

log = logging.getLogger(__name__)


def too_large_message(filename: str, size: int, max_bytes: int = MAX_UPLOAD_BYTES) -> str:
    """What the user reads when ``filename`` (``size`` bytes) is over the limit."""
    return (f"{filename} has {size / 1e6:.1f} MB; the app reads files of at most {max_bytes / 1e6:g} MB. Upload a "
            "smaller extract of it.")


class CSVFileInput(JSComponent):
    """A file input (``<input type="file">``) for one CSV file of at most ``max_bytes``.

    ``on_file(filename, content)`` gets the bytes of every file the user picks within the limit; ``on_refused(
    message)`` says why a file was not taken (too large, or a message that cannot be decoded). Neither the file's
    content nor a failure of ``on_file`` goes into the server's log beyond the file's name and size.
    """

    accept = param.String(default=".csv", doc="File types the browser's file dialog offers.")
    max_bytes = param.Integer(default=MAX_UPLOAD_BYTES, bounds=(1, MAX_UPLOAD_BYTES),
                              doc="Largest file sent to the server; a larger one is refused in the browser.")

    _esm = """
    export function render({ model, el }) {
      const input = document.createElement("input")
      input.type = "file"
      input.accept = model.accept
      input.style.width = "100%"
      input.addEventListener("change", () => {
        const file = input.files.length ? input.files[0] : null
        input.value = ""  // the same file picked again is a new upload
        if (file === null) return
        if (file.size > model.max_bytes) {
          model.send_msg({filename: file.name, size: file.size})
          return
        }
        const reader = new FileReader()
        reader.onload = () => {
          const url = reader.result
          model.send_msg({filename: file.name, size: file.size, content: url.slice(url.indexOf(",") + 1)})
        }
        reader.readAsDataURL(file)
      })
      el.appendChild(input)
    }
    """

    def __init__(self, on_file: Callable[[str, bytes], None], on_refused: Callable[[str], None], **params):
        super().__init__(**params)
        self._on_file, self._on_refused = on_file, on_refused

    def _handle_msg(self, msg) -> None:
        filename, size = str(msg.get("filename") or "upload.csv")[:200], msg.get("size")
        content = msg.get("content")
        if content is None or not isinstance(size, int) or size > self.max_bytes \
                or len(content) > 4 * (self.max_bytes // 3 + 1):  # base64: 4 characters per 3 bytes
            self._on_refused(too_large_message(filename, size if isinstance(size, int) else len(content or "")
                                               * 3 // 4, self.max_bytes))
            return
        try:
            data = base64.b64decode(content, validate=True)
        except (binascii.Error, ValueError):
            self._on_refused(f"{filename} did not arrive whole. Upload it again.")
            return
        self.receive(filename, data)

    def receive(self, filename: str, content: bytes) -> None:
        """Hand ``content`` to ``on_file``; a failure is logged with the file's name and size only (Panel would log
        the whole event, file included) and said to the user."""
        try:
            self._on_file(filename, content)
        except Exception:  # noqa: BLE001 - an upload must never take the session down or fill the log
            log.error("the upload %r (%d bytes) could not be used", filename, len(content), exc_info=True)
            self._on_refused(f"{filename} could not be used. Check that it is a CSV table and upload it again.")
