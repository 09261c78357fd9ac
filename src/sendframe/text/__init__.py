"""Pure text functions, no I/O: templates, filters, encodings, parts, translation."""
