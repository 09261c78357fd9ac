"""The analyst's send path: contacts, preview, estimate, preflight, send, ledger."""
