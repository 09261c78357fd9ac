"""ipywidgets shells: the campaign :class:`Composer` and the delivery :class:`Monitor`.

Both only wire widgets to the tested functions: the Composer builds one :class:`~sendframe.Message`
(:mod:`sendframe.notebook.form`) and calls its methods; it sends in the background
(:mod:`sendframe.notebook.sending`); what both show is made by the pure functions of
:mod:`sendframe.notebook.widget_html`. This module gathers them under the name the package exports.

    >>> composer = Composer(contacts, client=client, sender="Shop")   # doctest: +SKIP
    >>> composer                                                       # doctest: +SKIP
"""

from __future__ import annotations

from sendframe.notebook.composer import Composer
from sendframe.notebook.form import ComposerForm, message_from_form
from sendframe.notebook.monitor import Monitor
from sendframe.notebook.widget_html import counter_html, highlight, problems_html

__all__ = ["Composer", "ComposerForm", "Monitor", "counter_html", "highlight", "message_from_form", "problems_html"]
