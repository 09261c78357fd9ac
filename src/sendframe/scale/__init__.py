"""sendframe past one machine: contact tables and callback logs as Dask frames (``sendframe[dask]``).

The pandas functions take a Dask frame as they take a pandas one and answer lazily, running the
same pandas code on every partition (:mod:`~sendframe.scale.messages`); rules that span rows (a
recipient repeated anywhere in the table) are kept right across partitions by a shuffle on the
recipient (:mod:`~sendframe.scale.partitions`). Dask itself is imported only when a Dask frame is
met (:mod:`~sendframe.scale.engine` imports this package's modules then), so the pandas path never needs it.

    >>> import sendframe
    >>> contacts = sendframe.read_contacts("contacts/*.parquet", dask=True)  # doctest: +SKIP
    >>> msg = sendframe.sms("Hi {name}", sender="Shop", encoding="auto")  # doctest: +SKIP
    >>> sendframe.estimate_totals(msg.estimate(contacts))  # doctest: +SKIP
"""
