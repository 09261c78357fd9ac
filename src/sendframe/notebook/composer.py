"""The Composer: write one message, see it as recipients will, check it, price it, send it in the background.

Its inputs make ONE :class:`~sendframe.Message` (:func:`~sendframe.notebook.form.message_from_form`,
also ``composer.message``), and every button uses that message's own methods: ``render`` for the
preview, ``preflight``/``plan`` for Check, ``estimate`` for the confirmation, ``send`` for Send. So
the widget, the library and the CLI cannot disagree. Send runs in a thread (the kernel stays free),
with a progress bar, a Cancel that starts no new batch, and a ledger by default, so pressing Send
twice or running the notebook again never sends anyone twice.

    >>> composer = Composer({"spring": contacts}, client=client, sender="Shop")   # doctest: +SKIP
    >>> composer                                                                 # doctest: +SKIP
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import pandas as pd

from sendframe.api.wire import ENV_API_PASSWORD
from sendframe.campaign.channel_options import text_option
from sendframe.campaign.command import message_ledger_path
from sendframe.campaign.contacts import read_contacts
from sendframe.campaign.counter import MessageCounter
from sendframe.campaign.message import Message
from sendframe.campaign.policy import skipped_summary
from sendframe.campaign.tables import as_frame
from sendframe.channels import CHANNEL_INFO
from sendframe.errors import InputError, RowsSkippedWarning, SendframeError
from sendframe.notebook.form import (
    CHANNEL_INPUTS,
    CHOICES,
    COLUMN_INPUTS,
    INPUT_LABELS,
    checked_form,
    composer_options,
    message_from_form,
    preview_message,
    template_label,
)
from sendframe.notebook.report import optional_import
from sendframe.notebook.sending import BackgroundJob
from sendframe.notebook.widget_html import (
    confirmation_html,
    counter_figures,
    counter_html,
    error_html,
    ledger_html,
    preview_html,
    problems_html,
    progress_html,
    result_html,
    without_credentials,
)

w = optional_import("ipywidgets", "The notebook widgets need ipywidgets")
display = optional_import("IPython.display", "The notebook widgets need IPython").display

__all__ = ["Composer"]

_HIDDEN, _SHOWN = "none", None
_TEXT_HEIGHTS = {"message": "90px", "body": "90px", "template_body": "70px"}
_PLACEHOLDERS = {"campaign_name": "optional", "to": "(phone or email, found in the table)",
                 "message": "Hi {name|capitalize}, ...", "body": "<p>Hi {name|capitalize}</p>",
                 "template_body": "<p>Hi {name}</p> (empty: a page showing the message)", "subject": "Hi {name}",
                 "from_email": "news@shop.example", "reply_to": "(the from email)", "audio_url": "https://…/message.mp3"}
_TAGS = re.compile(r"<[^>]*>")
T = TypeVar("T")


class Composer:
    """Write a message with a live preview and counter, check it, and send it in the background.

    ``tables`` maps a name to a contact table (a frame, any frame exporting Arrow, or a file read with
    :func:`sendframe.read_contacts`); a single frame is named ``contacts``. Every other keyword is named as the
    library's options: the inputs' starting values (``channel``, ``message``, ``sender``, ``to``, ...), the
    message's settings and request fields no input shows (``notification_url``, ``suppression``,
    ``schedule_date``, ...) and :meth:`sendframe.Message.send`'s (``client``, ``ledger``, ``keep``, ``max_cost``,
    ...; not ``progress``, ``cancel`` or ``out``: the widget has its own). ``message`` may also be a
    :class:`~sendframe.Message`, which the form starts from (fields no input shows are kept while the channel
    stays). ``ledger`` defaults to the file ``sendframe send`` would use for this table and message.
    """

    channel: Any  # its Dropdown, made with the other inputs (_make_controls)

    def __init__(self, tables: Mapping[str, Any] | Any, *, message: Message | str | None = None,
                 sample_size: int = 5, **options: Any) -> None:
        self._tables = dict(tables) if isinstance(tables, Mapping) else {"contacts": tables}
        if not self._tables:
            raise InputError("Composer needs at least one contact table.")
        # send_options: the options of Message.send every send of this Composer takes (``ledger``, ...)
        initial, self._settings, self.send_options = composer_options(options, message)
        self._extra = (initial["channel"], initial["extra_fields"])
        self._frames: dict[str, pd.DataFrame] = {}
        self.sample_size = sample_size
        self.results: pd.DataFrame | None = None
        self.error: BaseException | None = None
        self._message: Message | SendframeError = InputError("The Composer has no message yet.")
        self._job: BackgroundJob | None = None
        self._counter: MessageCounter | None = None

        self.table = w.Dropdown(options=list(self._tables), description="Contacts")
        self._controls = self._make_controls(initial)
        self.inputs = {name: c for name, c in self._controls.items() if name not in ("channel", "campaign_name")}
        """The inputs of the message's options (``composer.inputs["message"]``), each shown for the channels it
        applies to."""
        self.counter, self.preview, self.readiness, self.ledger_line = w.HTML(), w.HTML(), w.HTML(), w.HTML()
        self.problems, self.confirmation, self.progress_label, self.status = w.HTML(), w.HTML(), w.HTML(), w.HTML()
        self.check_button = _button("Check (preflight)", self.check, icon="check")
        self.send_button = _button("Send…", self.ask_to_send, button_style="primary", icon="paper-plane")
        self.confirm_button = _button("Yes, send", self.send, _HIDDEN, button_style="danger")
        self.back_button = _button("No, go back", lambda: self._hide_confirmation("Not sent."), _HIDDEN)
        self.cancel_button = _button("Cancel", self.cancel, _HIDDEN, icon="stop", button_style="warning",
                                     tooltip="Start no new batch; batches in flight finish")
        self.progress = w.IntProgress(value=0, min=0, max=1, description="Sending", layout=w.Layout(display=_HIDDEN))
        for control in (self.table, *self._controls.values()):
            control.observe(self._on_change, names="value")
        i = self._controls
        self.widget = w.VBox([
            w.HBox([self.table, i["channel"], i["campaign_name"]]),
            w.HBox([i["sender"], i["encoding"], i["parts"], i["trans"]]),
            w.HBox([i["subject"], i["from_email"], i["reply_to"]]),
            w.HBox([i["language"], i["gender"], i["audio_url"], i["template_id"]]),
            *(i[name] for name in COLUMN_INPUTS),
            i["to"], i["message"], i["body"], i["template_body"],
            self.counter, w.HTML("<b>Preview</b>"), self.preview, self.readiness, self.ledger_line,
            w.HBox([self.check_button, self.send_button]), self.problems,
            w.HBox([self.confirmation, self.confirm_button, self.back_button]),
            w.HBox([self.progress, self.progress_label, self.cancel_button]), self.status,
        ])
        self._show_channel_inputs()
        self.update()

    def _make_controls(self, form: dict[str, Any]) -> dict[str, Any]:
        """One widget per value of the form, also reachable as an attribute (``composer.sender``, ...), except
        ``message``: ``composer.message`` is the message the inputs make (its input: ``composer.inputs["message"]``)."""
        controls: dict[str, Any] = {}
        for name in INPUT_LABELS:
            value = form[name]
            if name in COLUMN_INPUTS:
                control = w.TagsInput(value=list(value), allow_duplicates=True, layout=w.Layout(width="100%"))
            elif name in CHOICES:
                control = w.Dropdown(options=CHOICES[name], value=value)
            elif isinstance(value, bool):
                control = w.Checkbox(value=value, indent=False)
            elif isinstance(value, int):  # parts (its maximum: the channel's) and template_id
                control = w.BoundedIntText(value=value, min=int(name == "parts"), max=2**31 - 1)
            elif name in _TEXT_HEIGHTS:
                control = w.Textarea(value=value, placeholder=_PLACEHOLDERS[name],
                                     layout=w.Layout(width="100%", height=_TEXT_HEIGHTS[name]))
            else:
                control = w.Text(value=value, placeholder=_PLACEHOLDERS.get(name, ""),
                                 layout=w.Layout(width="60%" if name == "audio_url" else ""))
            control.description = INPUT_LABELS[name]
            controls[name] = control
            if name != "message":
                setattr(self, name, control)
        return controls

    # ------------------------------------------------------------------ what the inputs say

    def _ipython_display_(self) -> None:  # pragma: no cover - needs a front end
        display(self.widget)

    @property
    def contacts(self) -> pd.DataFrame:
        """The chosen contact table (a file is read once, with :func:`sendframe.read_contacts`)."""
        name = self.table.value
        if name not in self._frames:
            table = self._tables[name]
            self._frames[name] = read_contacts(table) if isinstance(table, (str, os.PathLike)) else as_frame(table)
        return self._frames[name]

    @property
    def form(self) -> dict[str, Any]:
        """The inputs' current values (:mod:`sendframe.notebook.form`)."""
        extra = self._extra[1] if self.channel.value == self._extra[0] else {}
        return {**{name: control.value for name, control in self._controls.items()}, "extra_fields": extra}

    def set(self, **values: Any) -> None:
        """Set several inputs at once (names of :data:`~sendframe.notebook.form.FORM_DEFAULTS`, ``table``).

            >>> composer.set(channel="voice", message="Hola {name}", language="es_ES")  # doctest: +SKIP
        """
        table = values.pop("table", None)
        form = checked_form(values, "Composer.set", base=self.form)
        if table is not None:
            self.table.value = table
        for name, control in self._controls.items():  # the channel first: the inputs shown follow it
            if name in values:
                control.value = list(form[name]) if isinstance(form[name], tuple) else form[name]
        if "extra_fields" in values:
            self._extra = (form["channel"], form["extra_fields"])
            self.update()

    @property
    def message(self) -> Message:
        """The one :class:`~sendframe.Message` the inputs make; ``InputError`` says which input is missing or wrong."""
        if isinstance(self._message, SendframeError):
            raise self._message
        return self._message

    @property
    def ledger_path(self) -> Any:
        """The ledger a send uses: the one given, else the default file for this table and message.

        None while the message is incomplete (no default file can be named yet).
        """
        if self.send_options.get("ledger") is not None:
            return self.send_options["ledger"]
        if isinstance(self._message, SendframeError):
            return None
        table = self._tables[self.table.value]
        return message_ledger_path(str(table) if isinstance(table, (str, os.PathLike)) else self.table.value,
                                   self._message)

    def _secrets(self) -> list[str]:
        password = getattr(getattr(self.send_options.get("client"), "config", None), "api_password", None)
        return [s for s in (os.environ.get(ENV_API_PASSWORD), password and password.get_secret_value()) if s]

    def _on_change(self, change: Any) -> None:
        if change["owner"] is self.channel:  # what was written travels to the new channel's text input
            old, new = text_option(change["old"]), text_option(change["new"])
            if old and new and old != new and not self.inputs[new].value.strip():
                self.inputs[new].value = self.inputs[old].value
        if change["owner"] in (self.channel, self.table):
            self._show_channel_inputs()
        self.update()

    def _show_channel_inputs(self) -> None:
        name = self.channel.value
        used = CHANNEL_INPUTS[name]
        for input_name, control in self.inputs.items():
            control.layout.display = _SHOWN if input_name in used else _HIDDEN
        if text_option(name) == "message":
            self.inputs["message"].description = template_label(name)
        self.inputs["sender"].placeholder = "34911111111" if name == "whatsapp" else "Shop"
        self.inputs["parts"].max = CHANNEL_INFO[name].max_parts
        columns = list(self.contacts.columns)
        for field in COLUMN_INPUTS:
            self.inputs[field].allowed_tags = columns

    # ------------------------------------------------------------------ live preview and counter

    def update(self) -> None:
        """Rebuild the message from the inputs; recompute the counter, the preview and the ledger line."""
        self._hide_confirmation("")
        form = self.form
        try:
            self._message, self.readiness.value = message_from_form(form, **self._settings), ""
        except SendframeError as exc:
            self._message, self.readiness.value = exc, error_html("Not ready to send", exc)
        path = self.ledger_path
        self.ledger_line.value = ledger_html(getattr(path, "path", path))
        text = text_option(form["channel"])
        if text and not form[text].strip():
            self.counter.value, self.preview.value = f"<i>Write the {template_label(form['channel']).lower()} to "\
                "see the counter and the preview.</i>", ""
            return
        try:
            msg = self._message if isinstance(self._message, Message) else preview_message(form, **self._settings)
            if self._counter is None or self._counter.contacts is not self.contacts:
                self._counter = MessageCounter(self.contacts)  # one per table: it keeps the table's measurements
            totals = self._counter.count(msg, keep=self.send_options.get("keep"))
            self.preview.value = self._preview(msg)
        except SendframeError as exc:
            self.counter.value, self.preview.value = error_html("Cannot preview", exc), ""
            return
        self.counter.value = counter_html(counter_figures(totals), sms=msg.info.sends_sms)

    def _preview(self, msg: Message) -> str:
        sample = self.contacts.head(self.sample_size)
        if msg.channel == "voiceAudio":
            return preview_html(((label, msg.fields["audioUrl"]) for label in sample.index), heading="plays")
        if msg.channel == "whatsapp":
            return preview_html(((label, _whatsapp_text(msg, row)) for label, row in sample.iterrows()),
                                heading=f"template {msg.fields['templateId']}")
        texts = msg.render(sample)
        if msg.channel == "mailing":
            bodies = msg.render(sample, field="body").str.replace(_TAGS, " ", regex=True).str.strip().str.slice(0, 200)
            texts = texts.where(texts.isna() | bodies.isna(), texts + " — " + bodies)  # a missing body: the subject
        return preview_html(texts.items(), sms=msg.info.sends_sms)

    # ------------------------------------------------------------------ check, confirm, send

    def _attempt(self, work: Callable[[], T], output: Any, failed: str) -> T | None:
        """What ``work()`` returns; None once its ``SendframeError`` is shown in ``output``, said after ``failed``."""
        try:
            return work()
        except SendframeError as exc:
            output.value = error_html(failed, exc, self._secrets())
            return None

    def check(self) -> pd.DataFrame | None:
        """Run the message's preflight over the table and show its problems and what a send would skip."""
        keep = self.send_options.get("keep")
        prepared = self._attempt(lambda: self.message.prepare(self.contacts, keep=keep), self.problems, "Cannot check")
        if prepared is None:
            return None
        self.problems.value = problems_html(prepared.problems, skipped=skipped_summary(prepared.plan))
        return prepared.problems.copy()

    def ask_to_send(self) -> None:
        """Show what the send would do (recipients, skipped rows, cost, ledger) and ask to confirm."""
        if self._refused_while_running():
            return
        keep = self.send_options.get("keep")
        estimate = self._attempt(lambda: self.message.estimate(self.contacts, keep=keep), self.status, "Not sent")
        if estimate is None:
            return
        path = self.ledger_path
        self.confirmation.value = confirmation_html(self.channel.value, estimate, getattr(path, "path", path))
        self.confirm_button.layout.display = self.back_button.layout.display = _SHOWN

    def _refused_while_running(self) -> bool:
        if self.running:
            self.status.value = "A send is already running: wait for it to end, or Cancel it."
        return self.running

    def _hide_confirmation(self, message: str) -> None:
        self.confirmation.value = ""
        self.confirm_button.layout.display = self.back_button.layout.display = _HIDDEN
        if message:
            self.status.value = message

    def send(self) -> None:
        """Start sending in the background and return at once (the confirm button calls this).

        The result lands in ``results`` when the send ends (:meth:`wait` waits for it); errors are
        shown in the widget and kept in ``error``.
        """
        if self._refused_while_running():
            return
        self._hide_confirmation("")
        msg = self._attempt(lambda: self.message, self.status, "Not sent")
        if msg is None:
            return
        contacts, ledger = self.contacts.copy(), self.ledger_path
        options = {**self.send_options, "ledger": ledger}
        self.results, self.error = None, None
        self.send_button.disabled = self.check_button.disabled = True
        self._show_progress(0, None)
        self.progress.bar_style = ""
        self.progress.layout.display = self.cancel_button.layout.display = _SHOWN
        self.cancel_button.disabled = False
        self.status.value = "Sending in the background: the notebook stays free."
        # the ledger is named at the end as it was at the start, whatever is typed meanwhile
        self._job = BackgroundJob(
            lambda progress, cancel: msg.send(contacts, progress=progress, cancel=cancel, **options),
            on_progress=self._show_progress, on_done=lambda job: self._finished(job, getattr(ledger, "path", ledger)),
            name="sendframe-composer-send").start()

    @property
    def running(self) -> bool:
        """True while a send runs in the background."""
        return self._job is not None and self._job.running

    def cancel(self) -> None:
        """Start no new batch (batches in flight finish and are recorded); the rows left are ``not_sent``."""
        if not self.running or self._job is None:
            return
        self._job.cancel()
        self.cancel_button.disabled = True
        self.status.value = "Cancelling: no new batch starts; the batches in flight finish."

    def wait(self, timeout: float | None = None) -> pd.DataFrame | None:
        """Wait for the background send to end; returns ``results`` (None if it failed: see ``error``).

        Raises ``TimeoutError`` if it is still running after ``timeout`` seconds.
        """
        if self._job is not None and not self._job.wait(timeout):
            raise TimeoutError(f"The send is still running after {timeout} s (composer.cancel() stops it).")
        return self.results

    def _show_progress(self, done: int, total: int | None) -> None:
        self.progress.max = max(total or 1, 1)
        self.progress.value = min(done, self.progress.max)
        self.progress_label.value = progress_html(done, total)

    def _finished(self, job: BackgroundJob, ledger: Any) -> None:
        """Called from the send's thread when it ends."""
        self.results, self.error = job.result, job.error
        if job.error is not None:
            self.progress.bar_style = "danger"
            started = job.total is not None  # batches had begun: some rows may have been sent
            self.status.value = error_html("Sending stopped" if started else "Not sent", job.error, self._secrets()) + (
                "<br>The ledger keeps every answer: press Send again to continue (no one is sent twice)."
                if started else "")
        else:
            if job.total is None:  # nothing was pending: the bar is full
                self._show_progress(0, 0)
            self.progress.bar_style = "warning" if job.cancelled else "success"
            notes = [without_credentials(str(m.message), self._secrets())
                     for m in job.warnings if not issubclass(m.category, RowsSkippedWarning)]
            self.status.value = result_html(job.result, job.n, ledger, cancelled=job.cancelled) + "".join(
                f"<br><span style='color:#757575'>{html.escape(note)}</span>" for note in notes)
        self.cancel_button.layout.display = _HIDDEN
        self.send_button.disabled = self.check_button.disabled = False


def _button(description: str, on_click: Callable[[], Any], display: str | None = _SHOWN, **look: Any) -> Any:
    """A button that calls ``on_click()`` when clicked."""
    button = w.Button(description=description, layout=w.Layout(display=display), **look)
    button.on_click(lambda _: on_click())
    return button


def _whatsapp_text(msg: Message, row: pd.Series) -> str:
    parts = []
    for option, wire in msg.info.column_fields:  # named as their inputs: header, body, button, default answer
        columns = msg.whatsapp_columns.get(wire, ())
        if columns:
            values = [str(row[c]) if c in row.index and pd.notna(row[c]) else f"<no {c}>" for c in columns]
            parts.append(f"{INPUT_LABELS[option].removesuffix(' fields').lower()}: {', '.join(values)}")
    return " · ".join(parts) or "(no variables)"
