"""Data coming back: record lookups, the callback receiver, callback log parsing, metrics."""
